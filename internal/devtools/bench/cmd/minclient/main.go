// Command minclient is the least client that does pin's registry work: a
// few dozen lines on go-containerregistry, the yardstick of issue 17. It
// is told each module's requests (pinbench writes them: the cost model's
// floor), and makes them with c modules at a time and one module's
// requests in the order they depend on each other: cold, a tag list, the
// manifest (and the linux/amd64 manifest under an index) and the config;
// warm, a tag list and a HEAD. Like pin, it pings the registry once and
// takes one token per 25 repositories. It keeps nothing, orders nothing
// and writes nothing: what pin takes beyond it is pin's own.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"
)

// Plan is one run's work; pinbench writes it (minimal.go).
type Plan struct {
	Registry string   `json:"registry"`
	Modules  []Module `json:"modules"`
}

// Module is one module's requests: a tag list of Repo when List, a
// manifest, platform manifest and config for each reference in Describe,
// a HEAD for each in Head.
type Module struct {
	Repo     string   `json:"repo"`
	List     bool     `json:"list,omitempty"`
	Describe []string `json:"describe,omitempty"`
	Head     []string `json:"head,omitempty"`
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: minclient PLAN.json CONCURRENCY")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "minclient:", err)
		os.Exit(1)
	}
}

func run(planPath, conc string) error {
	ctx := context.Background()
	b, err := os.ReadFile(planPath)
	if err != nil {
		return err
	}
	var plan Plan
	if err := json.Unmarshal(b, &plan); err != nil {
		return err
	}
	c, err := strconv.Atoi(conc)
	if err != nil || c < 1 {
		return fmt.Errorf("concurrency %q", conc)
	}
	reg, err := name.NewRegistry(plan.Registry, name.Insecure)
	if err != nil {
		return err
	}
	rt := remote.DefaultTransport
	ch, err := transport.Ping(ctx, reg, rt)
	if err != nil {
		return err
	}
	// One token per 25 repositories, taken when its first module runs.
	batches := make([]func() (remote.Option, error), (len(plan.Modules)+24)/25)
	for i := range batches {
		batches[i] = sync.OnceValues(func() (remote.Option, error) {
			var scopes []string
			for _, m := range plan.Modules[25*i : min(25*i+25, len(plan.Modules))] {
				scopes = append(scopes, reg.Repo(m.Repo).Scope(transport.PullScope))
			}
			tok := &transport.Token{}
			if ch.Scheme == "bearer" || ch.Scheme == "Bearer" {
				if tok, err = transport.Exchange(ctx, reg, authn.Anonymous, rt, scopes, ch); err != nil {
					return nil, err
				}
			}
			t, err := transport.FromToken(reg, authn.Anonymous, rt, ch, tok)
			return remote.WithTransport(t), err
		})
	}
	work := make(chan int)
	errs := make(chan error, c)
	var wg sync.WaitGroup
	for range c {
		wg.Go(func() {
			for i := range work {
				if err := module(ctx, reg, plan.Modules[i], batches[i/25]); err != nil {
					errs <- fmt.Errorf("%s: %w", plan.Modules[i].Repo, err)
					return
				}
			}
		})
	}
	for i := range plan.Modules {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func module(ctx context.Context, reg name.Registry, m Module, batch func() (remote.Option, error)) error {
	if !m.List && len(m.Describe) == 0 && len(m.Head) == 0 {
		return nil // nothing to ask: no token either, as pin
	}
	tr, err := batch()
	if err != nil {
		return err
	}
	opts := []remote.Option{tr, remote.WithContext(ctx)}
	repo := reg.Repo(m.Repo)
	if m.List {
		if _, err := remote.List(repo, opts...); err != nil {
			return err
		}
	}
	for _, s := range m.Describe {
		ref, err := name.ParseReference(repo.Name()+s, name.Insecure)
		if err != nil {
			return err
		}
		img, err := remote.Image(ref, append(opts, remote.WithPlatform(v1.Platform{OS: "linux", Architecture: "amd64"}))...)
		if err != nil {
			return err
		}
		if _, err := img.RawConfigFile(); err != nil {
			return err
		}
	}
	for _, s := range m.Head {
		ref, err := name.ParseReference(repo.Name()+s, name.Insecure)
		if err != nil {
			return err
		}
		if _, err := remote.Head(ref, opts...); err != nil {
			return err
		}
	}
	return nil
}
