package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// TestFlagErrors: a flag pin does not take is bad input (exit 2), and
// the message names the flags it is near and the command whose --help
// lists them. The messages are golden; each suggestion is then run, and
// is a flag the command takes; so is the --help it points to.
func TestFlagErrors(t *testing.T) {
	dir := incidentDir(t, nil)
	cases := [][]string{
		{"resolve", "--chek"},
		{"resolve", "-check"}, // one dash: read as shorthands
		{"--versio"},
		{"resolve", "--lok", "other.lock.hcl"},      // inherited
		{"resolve", "--cat", "catalogue.hcl"},       // a prefix
		{"outdated", "--fail-o", "regression"},      // one edit
		{"resolve", "--frobnicate"},                 // near nothing
		{"resolve", "-x"},                           // a shorthand: near nothing
		{"plan", "--timeout"},                       // not unknown: no suggestion
		{"resolve", "--timeout", "abc"},             // a bad value
		{"lock", "--from-hots", "mesh-1", "--chek"}, // the first is reported
	}
	var b strings.Builder
	for _, args := range cases {
		r := pin(t, dir, args...)
		fmt.Fprintf(&b, "$ pin %s\nexit %d\n%s%s\n", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		if r.code != exitInput {
			t.Errorf("pin %s: exit %d, want %d", strings.Join(args, " "), r.code, exitInput)
		}
		help := regexp.MustCompile(`(?m)^  (pin[a-z -]*) --help lists `).FindStringSubmatch(r.stderr)
		if help == nil {
			t.Errorf("pin %s: no --help named:\n%s", strings.Join(args, " "), r.stderr)
			continue
		}
		hr := pin(t, dir, append(strings.Fields(help[1])[1:], "--help")...)
		if hr.code != 0 || !strings.Contains(hr.stdout, "Flags:") {
			t.Errorf("%s --help: exit %d\n%s%s", help[1], hr.code, hr.stdout, hr.stderr)
		}
		near := regexp.MustCompile(`did you mean (--[a-z-]+)`).FindStringSubmatch(r.stderr)
		if near == nil {
			continue
		}
		if !strings.Contains(hr.stdout, near[1]+" ") {
			t.Errorf("%s --help does not list %s", help[1], near[1])
		}
		// The suggestion in place of what was written parses: any exit
		// but a flag error's.
		// (A second bad flag is then reported, and that one alone.)
		fixed := append([]string(nil), args...)
		wrong := ""
		for i, a := range fixed {
			if strings.HasPrefix(a, "-") && strings.Contains(r.stderr, a) {
				wrong, fixed[i] = a, near[1]
				break
			}
		}
		if fr := pin(t, dir, fixed...); wrong == "" || (strings.Contains(fr.stderr, "--help lists") && strings.Contains(fr.stderr, wrong+"\n")) {
			t.Errorf("pin %s, as suggested: %s", strings.Join(fixed, " "), fr.stderr)
		}
	}
	golden(t, "messages.flags.txt", b.String())
}
