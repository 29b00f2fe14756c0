//go:build integration

package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// watchCounter is a proxy in front of the test cluster's API server that
// counts the watches open through it, by resource: a process given its
// kubeconfig is the only one counted, whatever other tests (other packages
// run beside this one on the same cluster) watch meanwhile.
type watchCounter struct {
	mu   sync.Mutex
	open map[string]int
}

// newWatchCounter starts the proxy and returns it with a kubeconfig that
// points to it.
func newWatchCounter(t *testing.T, cfg *rest.Config) (*watchCounter, string) {
	t.Helper()
	upstream, err := url.Parse(cfg.Host)
	require.NoError(t, err)
	transport, err := rest.TransportFor(cfg)
	require.NoError(t, err)
	proxy := httputil.NewSingleHostReverseProxy(upstream)
	proxy.Transport = transport
	proxy.FlushInterval = -1 // a watch streams its events as they come
	wc := &watchCounter{open: map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("watch") == "true" || r.URL.Query().Get("watch") == "1" {
			resource := watchedResource(r.URL.Path)
			wc.mu.Lock()
			wc.open[resource]++
			wc.mu.Unlock()
			defer func() {
				wc.mu.Lock()
				wc.open[resource]--
				wc.mu.Unlock()
			}()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	kc := clientcmdapi.NewConfig()
	kc.Clusters["proxy"] = &clientcmdapi.Cluster{Server: srv.URL}
	kc.AuthInfos["proxy"] = &clientcmdapi.AuthInfo{}
	kc.Contexts["proxy"] = &clientcmdapi.Context{Cluster: "proxy", AuthInfo: "proxy"}
	kc.CurrentContext = "proxy"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	require.NoError(t, clientcmd.WriteToFile(*kc, path))
	return wc, path
}

// watching is how many watches of resource are open through the proxy.
func (wc *watchCounter) watching(resource string) int {
	wc.mu.Lock()
	defer wc.mu.Unlock()
	return wc.open[resource]
}

// watchedResource is the resource of an API path: /api/v1/pods,
// /apis/apps/v1/namespaces/ns/replicasets → pods, replicasets.
func watchedResource(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 4 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	return parts[0]
}
