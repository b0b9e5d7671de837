package source

import (
	"context"
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/docker"
	"github.com/pin-tool/pin/internal/host/kubernetes"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/observe"
	"github.com/pin-tool/pin/internal/registry"
)

// UnknownHostError is a host named on the command line that the catalogue
// does not declare.
type UnknownHostError struct {
	Host  string
	Known []string
}

func (e *UnknownHostError) Error() string {
	return fmt.Sprintf("host %q is not in the catalogue (hosts: %s)", e.Host, strings.Join(e.Known, ", "))
}

// Hosts builds the adapters of the catalogue's hosts; with only set, of
// that host alone. Under Offline a live host is not asked: its adapter
// answers an error that is image.ErrUnavailable.
func Hosts(c *catalogue.Catalogue, o Options, only string) (map[string]observe.Host, error) {
	return hostsCounted(c, o, only, nil)
}

// hostsCounted is Hosts, the requests for published observations counted
// by counter (nil: not counted).
func hostsCounted(c *catalogue.Catalogue, o Options, only string, counter *registry.Counter) (map[string]observe.Host, error) {
	if only != "" && c.Host(only) == nil {
		var names []string
		for _, h := range c.Hosts {
			names = append(names, h.Name)
		}
		return nil, &UnknownHostError{Host: only, Known: names}
	}
	hosts := map[string]observe.Host{}
	published := &observationHosts{c: c, o: o, counter: counter, remotes: map[string]*registry.Remote{}}
	for _, h := range c.Hosts {
		if only != "" && h.Name != only {
			continue
		}
		switch {
		case h.Observations != "":
			hosts[h.Name] = published.host(h)
		case h.Snapshot != "":
			hosts[h.Name] = host.SnapshotFile{HostName: h.Name, Path: h.Snapshot}
		case o.Offline:
			hosts[h.Name] = offlineHost(h.Name)
		case h.Kubernetes != nil:
			k := h.Kubernetes
			hosts[h.Name] = kubernetes.Reusing(kubernetes.Host{Name: h.Name, Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace, Selector: k.SelectorText, Timeout: o.Timeout, StartTimes: o.StartTimes})
		default:
			hosts[h.Name] = docker.Host{Name: h.Name, Addr: h.Docker, Context: h.Context, CertPath: h.CertPath, TLSVerify: h.TLSVerify, Timeout: o.Timeout, StartTimes: o.StartTimes}
		}
	}
	return hosts, nil
}

// offlineHost is a live host under --offline: not asked. Its modules keep
// no floor from it and say so.
type offlineHost string

func (h offlineHost) Observe(context.Context) (*host.Snapshot, error) {
	return nil, offlineError(h)
}

// offlineError says how to read the host offline; it is
// image.ErrUnavailable: nothing was unreachable.
type offlineError string

func (e offlineError) Error() string {
	return fmt.Sprintf("host %s is read live, and --offline forbids it; give it a snapshot = \"<file>\" or drop --offline", string(e))
}

func (e offlineError) Is(target error) bool { return target == image.ErrUnavailable }

// ErrorSource is the source the message names: the host.
func (e offlineError) ErrorSource() string { return "host " + string(e) }
