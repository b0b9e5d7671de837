package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/resolve"
)

// unreachableHint is what to do about the registries a plan could not
// reach at all, one sentence per registry host ("" when none): a host
// that is a near miss of a registry block of the catalogue says so; every
// one names --offline, a mirror and the timeout.
func unreachableHint(cat *catalogue.Catalogue, p *resolve.Plan, timeout time.Duration) string {
	var failed []moduleFailure
	for _, d := range p.Decisions {
		if d.Err() != nil {
			failed = append(failed, moduleFailure{d.Module, d.Err()})
		}
	}
	return registryHint(cat, failed, timeout)
}

// outdatedHint is unreachableHint for pin outdated's reports.
func outdatedHint(cat *catalogue.Catalogue, reports []*resolve.ModuleStatus, timeout time.Duration) string {
	var failed []moduleFailure
	for _, r := range reports {
		for _, err := range r.Failures {
			failed = append(failed, moduleFailure{r.Module, err})
		}
	}
	return registryHint(cat, failed, timeout)
}

// moduleFailure is an error a module's run met.
type moduleFailure struct {
	module *catalogue.Module
	err    error
}

// registryHint is the hint for the failures that could not reach a
// registry, by registry host, each module named once.
func registryHint(cat *catalogue.Catalogue, failed []moduleFailure, timeout time.Duration) string {
	modules := map[string][]string{}
	var hosts []string
	for _, f := range failed {
		if f.module == nil || !registry.Unreachable(f.err) {
			continue
		}
		h, _, ok := strings.Cut(f.module.Image, "/")
		if !ok {
			continue
		}
		if modules[h] == nil {
			hosts = append(hosts, h)
		}
		if name := fmt.Sprintf("%q", f.module.Name); !slices.Contains(modules[h], name) {
			modules[h] = append(modules[h], name)
		}
	}
	slices.Sort(hosts)
	var b strings.Builder
	for _, h := range hosts {
		fmt.Fprintf(&b, "\nregistry %s could not be reached (module %s).", h, joinAnd(modules[h]))
		if r := cat.NearRegistry(h); r != nil {
			fmt.Fprintf(&b, " The catalogue has registry %q (%s:%d) but not %q: if the image means it, correct the image's host.", r.Host, r.DeclRange.Filename, r.DeclRange.Start.Line, h)
		}
		fmt.Fprintf(&b, " Check the network and the name; run with --offline to use only the lock and snapshots; give the registry a mirror (mirror = \"…\" in its registry block); or allow more than --timeout %s.", timeout)
	}
	return b.String()
}

// plural is "1 module", "2 modules".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
