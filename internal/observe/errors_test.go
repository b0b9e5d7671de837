package observe

import (
	"errors"
	"fmt"
	"testing"

	"github.com/pin-tool/pin/internal/host"
)

// TestSourceErrorNamesOnce: a source is named once: not again when the
// error says by its type that it names it (a host adapter's error, a
// snapshot's, a SourceError of the same source), and always otherwise,
// whatever the message's text says.
func TestSourceErrorNamesOnce(t *testing.T) {
	inner := &SourceError{Source: "registry of r/x", Err: errors.New("EOF")}
	for _, tc := range []struct {
		source string
		err    error
		want   string
	}{
		{"host h1", host.Errorf("h1", "host h1 (unix:///run/docker.sock): reading engine info: EOF"), "host h1 (unix:///run/docker.sock): reading engine info: EOF"},
		{"host h1", fmt.Errorf("observing: %w", host.Errorf("h1", "host h1: gone")), "observing: host h1: gone"},
		{"host h1", &host.SnapshotError{Host: "h1", Path: "h1.json", Err: errors.New("no such file")}, "reading snapshot of host h1 (h1.json): no such file"},
		{"host h1", host.Errorf("h10", "host h10 (tcp://x): EOF"), "host h1: host h10 (tcp://x): EOF"},
		// The text alone does not count: an error that only says the
		// source's name is named.
		{"host h1", errors.New("host h1: gone"), "host h1: host h1: gone"},
		{"registry of r/x", errors.New("listing tags of r/x: EOF"), "registry of r/x: listing tags of r/x: EOF"},
		{"registry of r/x", fmt.Errorf("listing tags: %w", inner), "listing tags: registry of r/x: EOF"},
	} {
		if got := (&SourceError{Source: tc.source, Err: tc.err}).Error(); got != tc.want {
			t.Errorf("SourceError{%q, %q} = %q, want %q", tc.source, tc.err, got, tc.want)
		}
	}
}
