package main

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/host"
	"github.com/pin-tool/pin/internal/host/docker"
	"github.com/pin-tool/pin/internal/host/kubernetes"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/resolve"
)

// hostsFor builds the Host adapters of the catalogue's hosts; with only
// set, of that host alone.
func hostsFor(c *catalogue.Catalogue, g *globalOptions, only string) (map[string]resolve.Host, error) {
	if only != "" && c.Host(only) == nil {
		var names []string
		for _, h := range c.Hosts {
			names = append(names, h.Name)
		}
		return nil, withCode(exitInput, fmt.Errorf("host %q is not in the catalogue (hosts: %s)", only, strings.Join(names, ", ")))
	}
	hosts := map[string]resolve.Host{}
	for _, h := range c.Hosts {
		if only != "" && h.Name != only {
			continue
		}
		switch {
		case h.Snapshot != "":
			hosts[h.Name] = host.SnapshotFile{HostName: h.Name, Path: h.Snapshot}
		case g.Offline:
			// Offline: a live host is not asked; its modules keep no floor
			// from it and say so.
			hosts[h.Name] = offlineHost(h.Name)
		case h.Kubernetes != nil:
			k := h.Kubernetes
			hosts[h.Name] = kubernetes.Host{Name: h.Name, Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace, Selector: k.SelectorText, Timeout: g.Timeout}
		default:
			hosts[h.Name] = docker.Host{Name: h.Name, Addr: h.Docker, CertPath: h.CertPath, TLSVerify: h.TLSVerify, Timeout: g.Timeout}
		}
	}
	return hosts, nil
}

// registries opens each source once and hands it to every module of its
// repository host.
type registries struct {
	c *catalogue.Catalogue
	g *globalOptions
	// counter counts every request sent to a registry, for -v.
	counter *registry.Counter
	mu      sync.Mutex
	src     map[string]resolve.Registry
}

func newRegistries(c *catalogue.Catalogue, g *globalOptions) *registries {
	return &registries{c: c, g: g, counter: registry.NewCounter(remote.DefaultTransport), src: map[string]resolve.Registry{}}
}

// summary prints, with -v, the requests sent to each registry.
func (r *registries) summary(s streams) {
	if !r.g.Verbose {
		return
	}
	lines := r.counter.Summary()
	if len(lines) == 0 {
		fmt.Fprintln(s.Err, "pin: no registry requests")
	}
	for _, l := range lines {
		fmt.Fprintf(s.Err, "pin: %s\n", sanitize(l))
	}
}

// cache is the on-disk cache of immutable content: --cache-dir, else the
// user cache folder; none when neither can be had.
func (r *registries) cache() *registry.Cache {
	dir := r.g.CacheDir
	if dir == "" {
		d, err := registry.DefaultCacheDir()
		if err != nil {
			return nil
		}
		dir = d
	}
	return registry.NewCache(dir)
}

// For returns the source for a repository, or nil when none may be asked.
func (r *registries) For(repo string) resolve.Registry {
	ref, err := name.NewRepository(repo)
	if err != nil {
		return nil
	}
	regHost := ref.RegistryStr()
	r.mu.Lock()
	defer r.mu.Unlock()
	if s, ok := r.src[regHost]; ok {
		return s
	}
	var s resolve.Registry
	conf := r.c.Registry(regHost)
	switch {
	case conf != nil && conf.MirrorLayout != "":
		l, err := registry.OpenLayout(conf.MirrorLayout)
		if err != nil {
			s = failing{err: fmt.Errorf("mirror of %s: %w", regHost, err)}
		} else {
			s = l
		}
	case r.g.Offline:
		if c := r.cache(); c != nil {
			s = registry.Offline{Cache: c}
		}
	default:
		opts := registry.RemoteOptions{Host: regHost, Concurrency: r.g.Concurrency, Cache: r.cache(), Transport: r.counter, Timeout: r.g.Timeout}
		// Where the registry hands out tokens, one covers many of these.
		opts.Repositories = r.c.Repositories(regHost)
		if conf != nil {
			opts.Mirror, opts.Insecure, opts.TokenHosts = conf.MirrorHost, conf.Insecure, conf.TokenHosts
		}
		s = registry.NewRemote(opts)
	}
	r.src[regHost] = s
	return s
}

// failing is a registry that could not be opened: every call says why.
type failing struct{ err error }

func (f failing) Tags(context.Context, string) ([]string, error) { return nil, f.err }
func (f failing) Image(context.Context, string, string, string) (image.Image, error) {
	return image.Image{}, f.err
}

type offlineHost string

func (h offlineHost) Observe(context.Context) (*host.Snapshot, error) {
	return nil, fmt.Errorf("host %s is read live, and --offline forbids it; give it a snapshot = \"<file>\" or drop --offline", string(h))
}

// Bounds on text printed to people: a run of characters without a space
// (a tag, a container name, a label value, a URL) and a line. Longer ones
// are cut with "…": a hostile or broken source must not flood a terminal
// or a CI log.
const (
	maxPrintedRun  = 256
	maxPrintedLine = 2048
)

// sanitize escapes control characters (terminal escape sequences among
// them), Unicode bidirectional controls and line separators in text
// printed to people, and cuts runs and lines longer than maxPrintedRun and
// maxPrintedLine characters with "…"; newlines and tabs stay.
func sanitize(s string) string {
	var b strings.Builder
	run, line := 0, 0
	cutRun, cutLine := false, false
	for _, r := range s {
		if r == '\n' {
			b.WriteByte('\n')
			run, line, cutRun, cutLine = 0, 0, false, false
			continue
		}
		out := string(r)
		switch {
		case r == '\t':
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
			out = fmt.Sprintf("\\x%02x", r)
		case r == 0x061c || r == 0x200e || r == 0x200f || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x2028 || r == 0x2029:
			out = fmt.Sprintf("\\u%04x", r)
		}
		space := out == string(r) && unicode.IsSpace(r)
		if space {
			run, cutRun = 0, false
		}
		if cutLine || (cutRun && !space) {
			continue
		}
		n := utf8.RuneCountInString(out)
		switch {
		case line+n > maxPrintedLine:
			b.WriteString("…")
			cutLine = true
		case !space && run+n > maxPrintedRun:
			b.WriteString("…")
			cutRun = true
			line++
		default:
			b.WriteString(out)
			line += n
			if !space {
				run += n
			}
		}
	}
	return b.String()
}
