package lock

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// promotedSample is an entry "pin promote" wrote, held by a manual pick.
func promotedSample() *Lock {
	return &Lock{Modules: []*Module{{
		Name: "forge", Policy: "at-least-running", Image: "registry.example.org/forge/forgejo", Tag: "1.28.0",
		Digest: dA, Source: SourceRunning, Reason: "promoted from staging", Hold: "1.28.1 breaks webhooks",
		Hosts:    []string{"p2", "p1"},
		Promoted: &Promotion{From: "staging", Hosts: []string{"s2", "s1", "s1"}, Since: time.Date(2026, 12, 1, 9, 30, 0, 0, time.FixedZone("CET", 3600)), Release: dB},
		Observed: []Observation{{Host: "p1", Container: "forgejo", Tag: "1.27.3", Digest: dC}},
	}}}
}

// promotedBytes is what Format must write for promotedSample, by hand:
// hold among the attributes, the promoted block before the observations,
// its hosts sorted and once, its date in UTC.
const promotedBytes = header + `
module "forge" {
  policy = "at-least-running"
  image  = "registry.example.org/forge/forgejo"
  tag    = "1.28.0"
  digest = "` + dA + `"
  source = "running"
  reason = "promoted from staging"
  hold   = "1.28.1 breaks webhooks"
  hosts  = ["p1", "p2"]

  promoted {
    from    = "staging"
    hosts   = ["s1", "s2"]
    since   = "2026-12-01T08:30:00Z"
    release = "` + dB + `"
  }

  observed "p1" {
    container = "forgejo"
    tag       = "1.27.3"
    digest    = "` + dC + `"
  }
}
`

func TestPromotedFormatParse(t *testing.T) {
	got := string(Format(promotedSample()))
	if diff := cmp.Diff(promotedBytes, got); diff != "" {
		t.Fatalf("Format (-want +got):\n%s", diff)
	}
	if !agree(t, []byte(got)) {
		t.Error("the fast path refused a promoted entry Format wrote")
	}
	l, diags := Parse([]byte(got), "pin.lock.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	m := l.Module("forge")
	if m.Hold != "1.28.1 breaks webhooks" || m.Promoted == nil || m.Promoted.From != "staging" ||
		!slices2(m.Promoted.Hosts, "s1", "s2") || m.Promoted.Since.Unix() != time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC).Unix() || m.Promoted.Release != dB {
		t.Errorf("parsed %+v, promoted %+v", m, m.Promoted)
	}
	if !Equal(l, promotedSample()) {
		t.Error("Equal: the parsed lock differs from the one formatted")
	}
}

func slices2(got []string, want ...string) bool { return cmp.Equal(got, want) }

// TestPromotedAbsentWhenUnset: an entry without provenance or hold writes
// neither (existing locks keep their bytes: TestFormatGolden), and Equal
// tells every field of them apart.
func TestPromotedAbsentWhenUnset(t *testing.T) {
	l := promotedSample()
	l.Modules[0].Promoted, l.Modules[0].Hold = nil, ""
	out := string(Format(l))
	if strings.Contains(out, "promoted {") || strings.Contains(out, "hold ") {
		t.Errorf("unset provenance written:\n%s", out)
	}
	for name, change := range map[string]func(m *Module){
		"no hold":      func(m *Module) { m.Hold = "" },
		"other hold":   func(m *Module) { m.Hold = "other" },
		"no promotion": func(m *Module) { m.Promoted = nil },
		"from":         func(m *Module) { m.Promoted.From = "dev" },
		"hosts":        func(m *Module) { m.Promoted.Hosts = []string{"s1"} },
		"since":        func(m *Module) { m.Promoted.Since = m.Promoted.Since.Add(time.Second) },
		"release":      func(m *Module) { m.Promoted.Release = dC },
	} {
		b := promotedSample()
		change(b.Modules[0])
		if Equal(promotedSample(), b) {
			t.Errorf("%s: Equal says the locks are the same", name)
		}
		if string(Format(b)) == promotedBytes {
			t.Errorf("%s: Format wrote the same bytes", name)
		}
	}
	b := promotedSample()
	b.Modules[0].Promoted.Since = b.Modules[0].Promoted.Since.Add(300 * time.Millisecond)
	b.Modules[0].Promoted.Hosts = []string{"s2", "s1"}
	if !Equal(promotedSample(), b) {
		t.Error("Equal tells apart what formats alike (a fraction of a second, host order)")
	}
}

// TestPromotedDiagnostics: a promoted block pin cannot trust is a
// diagnostic at its line, saying what works.
func TestPromotedDiagnostics(t *testing.T) {
	for name, tc := range map[string]struct{ from, to, summary string }{
		"no from":        {`    from    = "staging"` + "\n", "", "Missing required argument"},
		"empty from":     {`from    = "staging"`, `from    = ""`, "Empty value in lock"},
		"bad release":    {`release = "` + dB + `"`, `release = "sha256:x"`, "Invalid digest in lock"},
		"bad since":      {`2026-12-01T08:30:00Z`, `yesterday`, "Invalid date in lock"},
		"unknown":        {`    from    = "staging"`, `    from    = "staging"` + "\n    by = \"me\"", "Unsupported argument"},
		"two blocks":     {"  }\n\n  observed", "  }\n\n  promoted {\n    from = \"a\"\n    release = \"" + dA + "\"\n  }\n\n  observed", "Duplicate promoted block"},
		"hold not a str": {`hold   = "1.28.1 breaks webhooks"`, `hold   = 3`, "Invalid lock value"},
	} {
		t.Run(name, func(t *testing.T) {
			src := strings.Replace(promotedBytes, tc.from, tc.to, 1)
			if src == promotedBytes {
				t.Fatal("the case changed nothing")
			}
			_, diags := Parse([]byte(src), "pin.lock.hcl")
			if !diags.HasErrors() {
				t.Fatalf("parsed:\n%s", src)
			}
			if diags[0].Summary != tc.summary || diags[0].Subject == nil || diags[0].Subject.Start.Line < 12 {
				t.Errorf("%s at %v, want %q at the promoted block", diags[0].Summary, diags[0].Subject, tc.summary)
			}
		})
	}
}

// TestPromotedHealth: the health a promotion saw is written in the
// promoted block, sorted and once, read back by both parsers alike, and
// told apart by Equal; a block without it keeps its bytes.
func TestPromotedHealth(t *testing.T) {
	l := promotedSample()
	l.Modules[0].Promoted.Health = []string{"s2/forgejo: running, health check unhealthy (not required)", "s1/forgejo: running, healthy", "s1/forgejo: running, healthy"}
	got := string(Format(l))
	want := strings.Replace(promotedBytes, `    release = "`+dB+`"
`, `    release = "`+dB+`"
    health  = ["s1/forgejo: running, healthy", "s2/forgejo: running, health check unhealthy (not required)"]
`, 1)
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("Format (-want +got):\n%s", d)
	}
	if !agree(t, []byte(got)) {
		t.Error("the fast path refused a promoted block with health")
	}
	back, diags := Parse([]byte(got), "pin.lock.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !Equal(back, l) || Equal(back, promotedSample()) {
		t.Errorf("Equal: health %v", back.Module("forge").Promoted.Health)
	}
	if string(Format(promotedSample())) != promotedBytes {
		t.Error("a promoted block without health changed its bytes")
	}
}
