package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Client reaches one cluster through the dynamic client, so that it works
// with any workload kind a Karta describes, and maps kinds to resources
// through discovery (cached in memory for the Client's lifetime, refreshed
// when a kind is not found).
type Client struct {
	Dynamic   dynamic.Interface
	Discovery discovery.CachedDiscoveryInterface
	Mapper    meta.ResettableRESTMapper
	// Server names the cluster in errors (the API server's URL).
	Server string
}

// The client-side rate limit. client-go's defaults (5 queries a second,
// bursts of 10) make a get -A over a few namespaces wait on itself; these
// are kubectl's.
const (
	defaultQPS   = 50
	defaultBurst = 300
)

// NewClient connects to the cluster of cfg. Nothing is sent until the
// Client is used.
func NewClient(cfg *rest.Config) (*Client, error) {
	cfg = rest.CopyConfig(cfg)
	if cfg.QPS == 0 {
		cfg.QPS = defaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = defaultBurst
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "karta"
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Host, err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("cluster %s: %w", cfg.Host, err)
	}
	return NewClientFrom(dyn, disc, cfg.Host), nil
}

// NewClientFrom builds a Client from its parts: tests pass fakes, and an
// embedding program that has its own clients passes those.
func NewClientFrom(dyn dynamic.Interface, disc discovery.DiscoveryInterface, server string) *Client {
	cached, ok := disc.(discovery.CachedDiscoveryInterface)
	if !ok {
		cached = memory.NewMemCacheClient(disc)
	}
	return &Client{
		Dynamic:   dyn,
		Discovery: cached,
		Mapper:    restmapper.NewDeferredDiscoveryRESTMapper(cached),
		Server:    server,
	}
}

// UnreachableError is a cluster that did not answer: no connection, a TLS
// or proxy failure, a timeout. The API server answering with an error
// status is not one.
type UnreachableError struct {
	Server string
	Err    error
}

func (e *UnreachableError) Error() string {
	return fmt.Sprintf("cannot reach the cluster at %s: %v", e.Server, unwrapURL(e.Err))
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// unwrapURL drops the request line a *url.Error puts in front of its cause
// (Get "https://…/api?timeout=32s": …): the server is named already.
func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// reach classifies err: a transport failure becomes an *UnreachableError;
// anything else (an API status, a cancelled context) is returned as is.
func (c *Client) reach(err error) error {
	if err == nil {
		return nil
	}
	var ue *UnreachableError
	if errors.As(err, &ue) || errors.Is(err, context.Canceled) {
		return err
	}
	if apierrors.IsUnauthorized(err) && !strings.Contains(err.Error(), c.Server) {
		// Which cluster refused the credentials is the useful part.
		return fmt.Errorf("cluster %s: %w", c.Server, err)
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return err
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		return &UnreachableError{Server: c.Server, Err: err}
	}
	// Discovery reports a failed group as an aggregate error of its own
	// type; what matters is whether a transport error is inside.
	var failed *discovery.ErrGroupDiscoveryFailed
	if errors.As(err, &failed) {
		for _, e := range failed.Groups {
			if errors.As(e, &urlErr) {
				return &UnreachableError{Server: c.Server, Err: e}
			}
		}
	}
	return err
}

// mapping maps a kind to its resource, or reports that the cluster does
// not serve it (meta.IsNoMatchError).
func (c *Client) mapping(gvk schema.GroupVersionKind) (*meta.RESTMapping, error) {
	m, err := c.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, c.reach(err)
	}
	return m, nil
}

// resourceFor is the dynamic client of a mapping, scoped to a namespace
// when the resource is namespaced.
func (c *Client) resourceFor(m *meta.RESTMapping, namespace string) dynamic.ResourceInterface {
	r := c.Dynamic.Resource(m.Resource)
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return r.Namespace(namespace)
	}
	return r
}
