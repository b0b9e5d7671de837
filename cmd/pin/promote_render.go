package main

import (
	"fmt"
	"strings"

	"github.com/pin-tool/pin/internal/promote"
	"github.com/pin-tool/pin/lock"
)

// promoteOutput is pin promote --format json
// (docs/schema/promote.schema.json).
type promoteOutput struct {
	Schema  int    `json:"schema"`
	Command string `json:"command"`
	From    string `json:"from"`
	To      string `json:"to"`
	// Lock is TO's lock file; Written whether this run wrote it.
	Lock    string `json:"lock"`
	Written bool   `json:"written"`
	// Release is the unit's hash; "" when nothing was promoted.
	Release string           `json:"release"`
	Entries []promoteEntry   `json:"entries"`
	Skipped []promoteSkipped `json:"skipped"`
	Refused []promoteRefused `json:"refused"`
	// Lifted are the modules whose hold --lift lifted.
	Lifted []string `json:"lifted"`
}

type promoteImage struct {
	Ref     string `json:"ref"`
	Tag     string `json:"tag"`
	Digest  string `json:"digest"`
	Version string `json:"version"`
}

type promoteEntry struct {
	Module string `json:"module"`
	// Action: promote (the entry changes) or unchanged.
	Action   string          `json:"action"`
	From     *promoteImage   `json:"from"`
	To       *promoteImage   `json:"to"`
	Reason   string          `json:"reason"`
	Hold     string          `json:"hold"`
	Promoted *statusPromoted `json:"promoted"`
}

type promoteSkipped struct {
	Module string `json:"module"`
	Kind   string `json:"kind"`
	Why    string `json:"why"`
}

type promoteRefused struct {
	Module  string `json:"module"`
	Kind    string `json:"kind"`
	Why     string `json:"why"`
	Fix     string `json:"fix"`
	Message string `json:"message"`
}

func promoteImageOf(m *lock.Module) *promoteImage {
	if m == nil {
		return nil
	}
	return &promoteImage{Ref: m.Ref(), Tag: m.Tag, Digest: m.Digest, Version: m.Version}
}

// promoteJSON is what a promotion decided, as JSON renders it.
func promoteJSON(o *promoteOptions, path string, res *promote.Result) promoteOutput {
	out := promoteOutput{Schema: JSONSchema, Command: "promote", From: o.From, To: o.To, Lock: path,
		Entries: []promoteEntry{}, Skipped: []promoteSkipped{}, Refused: []promoteRefused{}, Lifted: []string{}}
	if res == nil {
		return out
	}
	out.Release = res.Release
	for _, e := range res.Entries {
		pe := promoteEntry{Module: e.Module, Action: "promote", From: promoteImageOf(e.Old), To: promoteImageOf(e.New), Reason: e.New.Reason, Hold: e.New.Hold}
		if !e.Changed() {
			pe.Action = "unchanged"
		}
		if p := e.New.Promoted; p != nil {
			pe.Promoted = &statusPromoted{From: p.From, Hosts: nonNil(p.Hosts), Since: lock.FormatTime(p.Since), Release: p.Release, Health: p.Health}
		}
		out.Entries = append(out.Entries, pe)
	}
	for _, s := range res.Skipped {
		out.Skipped = append(out.Skipped, promoteSkipped{Module: s.Module, Kind: string(s.Kind), Why: s.Why})
	}
	for _, r := range res.Refusals {
		out.Refused = append(out.Refused, promoteRefused{Module: r.Module, Kind: string(r.Kind), Why: r.Why, Fix: r.Fix, Message: r.Error()})
	}
	return out
}

// writePromotion renders what a promotion decided, one module a line.
func writePromotion(b *strings.Builder, o *promoteOptions, res *promote.Result) {
	fmt.Fprintf(b, "Promotion %s → %s", o.From, o.To)
	if res.Release != "" {
		fmt.Fprintf(b, " (release %s)", res.Release)
	}
	b.WriteString(":\n")
	for _, e := range res.Entries {
		old := "(none)"
		if e.Old != nil {
			old = e.Old.Ref()
		}
		verb := "promote"
		if !e.Changed() {
			verb = "unchanged"
		}
		fmt.Fprintf(b, "  %-9s %s: %s → %s\n", verb, e.Module, old, e.New.Ref())
		fmt.Fprintf(b, "            %s\n", e.New.Reason)
		if e.New.Hold != "" {
			fmt.Fprintf(b, "            held: %s\n", e.New.Hold)
		}
	}
	for _, sk := range res.Skipped {
		fmt.Fprintf(b, "  skipped   %s: %s (%s)\n", sk.Module, sk.Why, sk.Kind)
	}
	for _, r := range res.Refusals {
		fmt.Fprintf(b, "  refused   %s (%s): %s\n", r.Module, r.Kind, r.Why)
	}
}
