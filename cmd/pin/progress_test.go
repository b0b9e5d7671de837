package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/catalogue"
)

// TestProgressWaitsASecond: a run shorter than the delay prints nothing,
// not even the erase.
func TestProgressWaitsASecond(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b, "resolve", true, time.Hour)
	p.loaded(&catalogue.Catalogue{Hosts: make([]*catalogue.Host, 1), Modules: make([]*catalogue.Module, 2)})
	p.hostDone(1, 1)
	p.moduleDone(1, 2)
	p.clear()
	p.moduleDone(2, 2) // after clear: nothing
	if b.Len() != 0 {
		t.Errorf("a run shorter than the delay printed %q", b.String())
	}
}

// asTerminal makes in-process runs treat stderr as a terminal, with no
// delay, for the length of the test.
func asTerminal(t *testing.T) {
	oldTerm, oldDelay := stderrIsTerminal, progressDelay
	stderrIsTerminal, progressDelay = func(streams) bool { return true }, 0
	t.Cleanup(func() { stderrIsTerminal, progressDelay = oldTerm, oldDelay })
}

// TestResolveProgress: resolve and lock count hosts and modules on a
// terminal's stderr and erase the line; JSON output keeps stderr silent.
func TestResolveProgress(t *testing.T) {
	dir := incidentLocked(t)
	asTerminal(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"resolve"}, "pin resolve: hosts 1/1, modules 3/3"},
		{[]string{"resolve", "forge"}, "pin resolve: hosts 1/1, modules 1/1"},
		{[]string{"lock", "--from-host", "mesh-1"}, "pin lock: hosts 1/1, modules 3/3"},
		{[]string{"outdated"}, "pin outdated: hosts 1/1, modules 3/3"},
	} {
		r := pin(t, dir, tc.args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d\n%s", tc.args, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "\r\x1b[K"+tc.want) || !strings.HasSuffix(r.stderr, "\r\x1b[K") {
			t.Errorf("%v: stderr %q, want a line %q, erased at the end", tc.args, r.stderr, tc.want)
		}
		if strings.Contains(r.stdout, "\x1b[K") {
			t.Errorf("%v: progress on stdout", tc.args)
		}
		json := pin(t, dir, append(tc.args, "--format", "json")...)
		if json.stderr != "" {
			t.Errorf("%v --format json: stderr %q", tc.args, json.stderr)
		}
	}
}
