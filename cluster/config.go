// Package cluster connects karta to a live Kubernetes cluster: kubeconfig
// loading with kubectl's flags, a dynamic client and a discovery-backed
// REST mapper.
package cluster

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// ConfigFlags are kubectl's usual connection flags. The zero value reads
// $KUBECONFIG (or ~/.kube/config) with its current context, or the
// in-cluster configuration when there is no kubeconfig at all.
type ConfigFlags struct {
	Kubeconfig    string
	Context       string
	Namespace     string
	AllNamespaces bool
}

// AddFlags registers --kubeconfig, --context and -n/--namespace; withAll
// adds -A/--all-namespaces for commands that list.
func (f *ConfigFlags) AddFlags(fs *pflag.FlagSet, withAll bool) {
	fs.StringVar(&f.Kubeconfig, "kubeconfig", "", "path to the kubeconfig `FILE` (default $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&f.Context, "context", "", "the kubeconfig `CONTEXT` to use (default its current context)")
	fs.StringVarP(&f.Namespace, "namespace", "n", "", "the `NAMESPACE` (default the context's namespace, or \"default\")")
	if withAll {
		fs.BoolVarP(&f.AllNamespaces, "all-namespaces", "A", false, "list across all namespaces")
	}
}

// clientConfig is the deferred-loading config kubectl uses: explicit path,
// then $KUBECONFIG's list, then ~/.kube/config, with the context and
// namespace overrides.
func (f *ConfigFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = f.Kubeconfig
	overrides := &clientcmd.ConfigOverrides{CurrentContext: f.Context}
	overrides.Context.Namespace = f.Namespace
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
}

// ErrNoConfig is the error of RESTConfig when there is no kubeconfig and
// karta does not run in a pod.
var ErrNoConfig = errors.New("no configuration found")

// RESTConfig returns the connection configuration the flags select.
func (f *ConfigFlags) RESTConfig() (*rest.Config, error) {
	cfg, err := f.clientConfig().ClientConfig()
	if clientcmd.IsEmptyConfig(err) {
		return nil, fmt.Errorf("no kubeconfig: pass --kubeconfig FILE, set $KUBECONFIG, or create ~/.kube/config: %w", ErrNoConfig)
	}
	if err != nil {
		return nil, fmt.Errorf("kubeconfig: %w", err)
	}
	return cfg, nil
}

// ResolvedNamespace is the namespace to work in: -n, else the context's
// namespace, else "default". With -A it is "" (all namespaces).
func (f *ConfigFlags) ResolvedNamespace() (string, error) {
	if f.AllNamespaces {
		return "", nil
	}
	ns, _, err := f.clientConfig().Namespace()
	if err != nil {
		return "", fmt.Errorf("kubeconfig: %w", err)
	}
	return ns, nil
}
