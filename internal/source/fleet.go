package source

import (
	"context"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/fleet"
	"github.com/pin-tool/pin/internal/observe"
)

// DefaultHostTimeout bounds the read of one host, all its requests
// together, when Options.HostTimeout is zero.
const DefaultHostTimeout = 2 * time.Minute

// readHosts reads the hosts, Options.HostConcurrency at once (default
// fleet.DefaultConcurrency), each within Options.HostTimeout: a slow
// host is named as timed out and holds nobody. A host that cannot be
// read stays in Observed.Errors, and its modules are refused, unless the
// catalogue says skip_unreachable: then it is left out of the run and
// returned in skipped, for the run to say so.
func readHosts(ctx context.Context, cat *catalogue.Catalogue, hosts map[string]observe.Host, o Options, done func(done, total int)) (observe.Observed, map[string]error) {
	in := make(map[string]fleet.Observer, len(hosts))
	for name, h := range hosts {
		in[name] = h
	}
	timeout := o.HostTimeout
	if timeout <= 0 {
		timeout = DefaultHostTimeout
	}
	got := fleet.Read(ctx, in, fleet.Options{Concurrency: o.HostConcurrency, Timeout: timeout, Done: done})
	out := observe.Observed{Snapshots: map[string]*host.Snapshot{}, Errors: map[string]error{}}
	skipped := map[string]error{}
	for name, r := range got {
		switch {
		case r.Err == nil:
			out.Snapshots[name] = r.Snapshot
		case skippable(cat, name, r.Err):
			skipped[name] = r.Err
		default:
			out.Errors[name] = r.Err
		}
	}
	out.Index()
	return out, skipped
}

// skippable: the catalogue lets the host be skipped when unreachable. A
// refused observation is not unreachable: it is a host that says
// something pin must not believe, and its modules are refused.
func skippable(cat *catalogue.Catalogue, name string, err error) bool {
	h := cat.Host(name)
	if h == nil || !h.SkipUnreachable {
		return false
	}
	return !isRefusal(err)
}
