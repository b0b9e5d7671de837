package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/pin-tool/pin/lock"
)

// label names an image for people, as resolve.Label does: its version when
// known ("1.27.3"); else its tag and build date ("latest (built
// 2026-09-17)"); else its tag and short digest (short, image.Short);
// else the short digest.
func label(tag, short, version, created string) string {
	if version != "" {
		return version
	}
	if t, err := time.Parse(time.RFC3339, created); err == nil {
		created = "built " + t.UTC().Format("2006-01-02")
	}
	switch {
	case tag != "" && created != "":
		return tag + " (" + created + ")"
	case tag != "" && short != "":
		return tag + "@" + short
	case tag != "":
		return tag
	case short != "" && created != "":
		return short + " (" + created + ")"
	case short != "":
		return short
	}
	return "(unknown)"
}

// imageLabel is label of a lock entry; "(none)" when there is none.
func imageLabel(i *imageOutput) string {
	if i == nil {
		return "(none)"
	}
	return label(i.Tag, i.short, i.Version, i.Created)
}

// changeText is what follows a module's change in the plan: the versions,
// "1.22.6 → 1.27.3" for an update, the one entry otherwise.
func changeText(m moduleOutput) string {
	switch {
	case m.Change == "refused" || m.Change == "error":
		return "" // the refusal or the error says which images
	case m.Old != nil && m.New != nil && m.Change == "update":
		old, nw := imageLabel(m.Old), imageLabel(m.New)
		switch {
		case m.Old.Image != m.New.Image && m.Old.Digest == m.New.Digest:
			return fmt.Sprintf(" %s (the same digest, from another repository: %s → %s)", nw, m.Old.Image, m.New.Image)
		case m.Old.Image != m.New.Image:
			return fmt.Sprintf(" %s %s → %s %s", m.Old.Image, old, m.New.Image, nw)
		case m.Old.Digest == m.New.Digest && len(m.changed) > 0:
			return fmt.Sprintf(" %s (the same image; its entry's %s change)", nw, joinAnd(m.changed))
		case old == nw:
			old, nw = old+"@"+m.Old.short, nw+"@"+m.New.short
		}
		return " " + old + " → " + nw
	case m.New != nil:
		return " " + imageLabel(m.New)
	case m.Old != nil:
		return " " + imageLabel(m.Old)
	}
	return ""
}

// cutoverText is "1.22.6 → 1.27.3": what runs, and what the lock would
// start; one label when they are the same image.
func cutoverText(it cutoverItem) string {
	runs := label(it.Running.Tag, it.Running.short, it.Running.Version, it.Running.Created)
	if it.Running.Digest == "" && it.Running.Version == "" {
		runs = strings.TrimSpace(it.Running.Tag + " image ID " + it.Running.shortID)
	}
	starts := imageLabel(it.Locked)
	if it.Verdict == "same" {
		return runs
	}
	if runs == starts && it.Locked != nil {
		runs, starts = runs+"@"+it.Running.short, starts+"@"+it.Locked.short
	}
	return runs + " → " + starts
}

// refusalWords says a refusal's kind in words for the plan table; the JSON
// keeps the kind.
func refusalWords(kind string) string {
	switch kind {
	case "downgrade":
		return "a downgrade"
	case "unknown-order":
		return "the order cannot be decided"
	case "no-registry-digest":
		return "what runs has no registry digest"
	case "nothing-to-lock":
		return "nothing to lock"
	}
	return kind
}

// entryChanges names the lines of a lock entry that change from old to
// nw, as the lock writes them ("observed", "reason"); nil when either is
// missing.
func entryChanges(old, nw *lock.Module) []string {
	if old == nil || nw == nil || old.Equal(nw) {
		return nil
	}
	fields := []struct {
		name string
		set  func(to, from *lock.Module)
	}{
		{"image", func(to, from *lock.Module) { to.Image = from.Image }},
		{"tag", func(to, from *lock.Module) { to.Tag = from.Tag }},
		{"tags", func(to, from *lock.Module) { to.Tags = from.Tags }},
		{"digest", func(to, from *lock.Module) { to.Digest = from.Digest }},
		{"config", func(to, from *lock.Module) { to.Config = from.Config }},
		{"platforms", func(to, from *lock.Module) { to.Platforms = from.Platforms }},
		{"version", func(to, from *lock.Module) { to.Version = from.Version }},
		{"created", func(to, from *lock.Module) { to.Created = from.Created }},
		{"policy", func(to, from *lock.Module) { to.Policy = from.Policy }},
		{"source", func(to, from *lock.Module) { to.Source = from.Source }},
		{"rule", func(to, from *lock.Module) { to.Rule = from.Rule }},
		{"reason", func(to, from *lock.Module) { to.Reason = from.Reason }},
		{"allow_downgrade", func(to, from *lock.Module) { to.AllowDowngrade = from.AllowDowngrade }},
		{"restore", func(to, from *lock.Module) { to.Restore = from.Restore }},
		{"verified", func(to, from *lock.Module) { to.Verified = from.Verified }},
		{"signer", func(to, from *lock.Module) { to.Signer = from.Signer }},
		{"signature", func(to, from *lock.Module) { to.Signature = from.Signature }},
		{"hosts", func(to, from *lock.Module) { to.Hosts = from.Hosts }},
		{"observed", func(to, from *lock.Module) { to.Observed = from.Observed }},
	}
	var out []string
	for _, f := range fields {
		probe := *old
		f.set(&probe, nw)
		if !probe.Equal(old) && !slices.Contains(out, f.name) {
			out = append(out, f.name)
		}
	}
	return out
}
