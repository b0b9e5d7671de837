package lock

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/hcl/v2"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	dA = "sha256:aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	dB = "sha256:bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
	dC = "sha256:cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"
)

func sample() *Lock {
	return &Lock{Hosts: []string{"mesh-2", "mesh-1"}, Modules: []*Module{
		{
			Name: "web", Policy: "track-upstream", Image: "index.docker.io/library/nginx", Tag: "v1.2",
			Digest: dA, Platforms: map[string]string{"linux/arm64/v8": dC, "linux/amd64": dB},
			Version: "1.2", Source: SourceUpstream, Rule: "version", Reason: "newest upstream tag within ~1.2",
		},
		{
			Name: "forge", Policy: "at-least-running", Image: "registry.example.org/forge/forgejo", Tag: "1.27.3", Tags: []string{"1.27.3", "1.27", "1.27.3"},
			Digest: dB, Config: dC, Version: "1.27.3", Created: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC),
			Source: SourceRunning, Rule: "version", Reason: "host mesh-1 runs 1.27.3, newer than the pin 1.22.6",
			Hosts: []string{"mesh-2", "mesh-1"},
			Observed: []Observation{
				{Host: "mesh-2", Container: "forgejo", Tag: "1.27.3", Digest: dB, ImageID: dC, Version: "1.27.3"},
				{Host: "mesh-1", Container: "forgejo", Tag: "1.27.3", Digest: dB, ImageID: dC, Version: "1.27.3", Created: time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)},
			},
		},
		{
			Name: "db", Policy: "exact", Image: "registry.example.org/db/postgres", Digest: dA, Source: SourcePin,
			Rule: "version", Reason: "the exact pin", AllowDowngrade: "16.5 corrupts indexes", Restore: "backup 2026-11-30",
		},
	}}
}

func TestFormatGolden(t *testing.T) {
	got := Format(sample())
	golden := filepath.Join("testdata", "sample.lock.hcl")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("Format (-golden +got):\n%s", diff)
	}
	// Same input, same bytes, whatever the order the model was built in.
	if again := Format(sample()); string(again) != string(got) {
		t.Error("Format is not deterministic")
	}
}

func TestRoundTrip(t *testing.T) {
	first := Format(sample())
	l, diags := Parse(first, "sample.lock.hcl")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := sample().normalised() // sample() is built unsorted
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("parse(format(x)) != x (-want +got):\n%s", diff)
	}
	if second := Format(l); string(second) != string(first) {
		t.Errorf("format → parse → format changed the bytes:\n%s", cmp.Diff(string(first), string(second)))
	}
}

// TestFormatLeavesInputAlone: Format sorts what it writes, but on a copy;
// the caller's lock, its module list and every module's observations stay
// as they were built.
func TestFormatLeavesInputAlone(t *testing.T) {
	l := sample()
	if slices.IsSortedFunc(l.Modules, compareModules) || slices.IsSortedFunc(l.Module("forge").Observed, compareObservations) {
		t.Fatal("sample() must be built out of order for this test to mean anything")
	}
	before := cloneLock(l)
	modules := slices.Clone(l.Modules) // the pointers the caller holds
	first := Format(l)
	if diff := cmp.Diff(before, l); diff != "" {
		t.Errorf("Format changed its input (-before +after):\n%s", diff)
	}
	for i, m := range l.Modules {
		if m != modules[i] {
			t.Errorf("Modules[%d] was replaced", i)
		}
	}
	if again := Format(l); string(again) != string(first) {
		t.Error("a second Format of the same lock gave other bytes")
	}
	if got, want := string(Format(nil)), string(Format(&Lock{})); got != want {
		t.Errorf("Format(nil) = %q, want the empty lock %q", got, want)
	}
}

// TestObservationTieBreak: two images seen in one container on one host
// are written in one order, by digest, then image ID, then tag, whichever
// order the lock was built in.
func TestObservationTieBreak(t *testing.T) {
	seen := func(digest, imageID, tag string) Observation {
		return Observation{Host: "mesh-1", Container: "forgejo", Digest: digest, ImageID: imageID, Tag: tag}
	}
	tests := []struct {
		name        string
		first, last Observation // in the order Format must write them
	}{
		{"digest", seen(dA, dC, "2.0"), seen(dB, dA, "1.0")},
		{"image ID", seen(dA, dB, "2.0"), seen(dA, dC, "1.0")},
		{"tag", seen(dA, dB, "1.0"), seen(dA, dB, "2.0")},
		{"no digest first", seen("", dC, "2.0"), seen(dA, dB, "1.0")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			build := func(obs ...Observation) *Lock {
				return &Lock{Modules: []*Module{{Name: "forge", Policy: "exact", Image: "registry.example.org/forge", Digest: dA, Source: SourcePin, Observed: obs}}}
			}
			inOrder, reversed := build(tt.first, tt.last), build(tt.last, tt.first)
			want := []Observation{tt.first, tt.last}
			for _, l := range []*Lock{inOrder, reversed} {
				if diff := cmp.Diff(want, l.normalised().Modules[0].Observed); diff != "" {
					t.Errorf("order (-want +got):\n%s", diff)
				}
			}
			a, b := Format(inOrder), Format(reversed)
			if string(a) != string(b) {
				t.Errorf("the order the lock was built in shows in its bytes:\n%s", cmp.Diff(string(a), string(b)))
			}
			// The bytes read back in the same order.
			l, diags := Parse(b, "pin.lock.hcl")
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if diff := cmp.Diff(want, l.Modules[0].Observed); diff != "" {
				t.Errorf("parsed order (-want +got):\n%s", diff)
			}
		})
	}
}

// cloneLock is a deep copy of l, sharing nothing with it.
func cloneLock(l *Lock) *Lock {
	if l == nil {
		return nil
	}
	c := &Lock{Hosts: slices.Clone(l.Hosts)}
	if l.Modules != nil {
		c.Modules = make([]*Module, len(l.Modules))
	}
	for i, m := range l.Modules {
		mc := *m
		mc.Platforms = maps.Clone(m.Platforms)
		mc.Observed = slices.Clone(m.Observed)
		if m.Promoted != nil {
			p := *m.Promoted
			p.Hosts = slices.Clone(p.Hosts)
			mc.Promoted = &p
		}
		c.Modules[i] = &mc
	}
	return c
}

func TestParseMangled(t *testing.T) {
	tests := []struct{ name, src, summary string }{
		{"short name", `module "x" {
  policy = "exact"
  image  = "alpine"
  digest = "` + dA + `"
  source = "pin"
}`, "Image not in canonical form"},
		{"stripped digest", `module "x" {
  policy = "exact"
  image  = "registry.example.org/x"
  digest = "aaaa"
  source = "pin"
}`, "Invalid digest in lock"},
		{"unknown source", `module "x" {
  policy = "exact"
  image  = "registry.example.org/x"
  digest = "` + dA + `"
  source = "magic"
}`, "Invalid source"},
		{"unknown attribute", `module "x" {
  policy = "exact"
  image  = "registry.example.org/x"
  digest = "` + dA + `"
  source = "pin"
  colour = "blue"
}`, "Unsupported argument"},
		{"duplicate", `module "x" {
  policy = "exact"
  image  = "registry.example.org/x"
  digest = "` + dA + `"
  source = "pin"
}
module "x" {
  policy = "exact"
  image  = "registry.example.org/x"
  digest = "` + dA + `"
  source = "pin"
}`, "Duplicate module in lock"},
		{"bad date", `module "x" {
  policy  = "exact"
  image   = "registry.example.org/x"
  digest  = "` + dA + `"
  source  = "pin"
  created = "yesterday"
}`, "Invalid date in lock"},
		{"broken syntax", `module "x" {`, "Unclosed configuration block"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse([]byte(tt.src), "pin.lock.hcl")
			if !diags.HasErrors() {
				t.Fatal("no error")
			}
			var sums []string
			for _, d := range diags {
				sums = append(sums, d.Summary)
				if d.Subject == nil {
					t.Errorf("%q has no range", d.Summary)
				}
			}
			if !strings.Contains(strings.Join(sums, "|"), tt.summary) {
				t.Errorf("diagnostics %q, want %q", sums, tt.summary)
			}
		})
	}
}

// TestParseUnknownPolicy: a policy the lock does not know is refused where
// it stands (file, line, column), with the policies it accepts, by the
// fast path and by hclparse alike.
func TestParseUnknownPolicy(t *testing.T) {
	good := string(Format(sample()))
	bad := strings.Replace(good, `policy          = "exact"`, `policy          = "exactly"`, 1)
	if bad == good {
		t.Fatal("the sample has no exact policy to edit")
	}
	line := 1 + strings.Count(bad[:strings.Index(bad, `"exactly"`)], "\n")
	for name, parse := range map[string]func([]byte, string) (*Lock, hcl.Diagnostics){"Parse": Parse, "hclparse": parseHCL} {
		_, diags := parse([]byte(bad), "pin.lock.hcl")
		if len(diags) != 1 {
			t.Fatalf("%s: diagnostics %v, want one", name, diags)
		}
		d := diags[0]
		if d.Summary != "Invalid policy" || d.Subject == nil {
			t.Fatalf("%s: %q at %v, want Invalid policy with a range", name, d.Summary, d.Subject)
		}
		if got, want := d.Subject.String(), fmt.Sprintf("pin.lock.hcl:%d,21-30", line); got != want {
			t.Errorf("%s: at %s, want %s", name, got, want)
		}
		for _, p := range Policies {
			if !strings.Contains(d.Detail, `"`+string(p)+`"`) {
				t.Errorf("%s: %q does not name the policy %q", name, d.Detail, p)
			}
		}
		if !strings.Contains(d.Detail, `this lock says "exactly"`) {
			t.Errorf("%s: %q does not quote what the lock says", name, d.Detail)
		}
	}
	// Every policy the lock names is read back.
	for _, p := range Policies {
		src := strings.Replace(good, `policy          = "exact"`, `policy          = "`+string(p)+`"`, 1)
		if _, diags := Parse([]byte(src), "pin.lock.hcl"); diags.HasErrors() {
			t.Errorf("policy %q: %v", p, diags)
		}
	}
}

func TestSaveOnlyOnChangeAndAtomically(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, DefaultPath)
	wrote, err := Save(p, sample())
	if err != nil || !wrote {
		t.Fatalf("first save: wrote=%v err=%v", wrote, err)
	}
	st1, _ := os.Stat(p)
	wrote, err = Save(p, sample())
	if err != nil || wrote {
		t.Fatalf("unchanged save: wrote=%v err=%v", wrote, err)
	}
	// The bytes pin resolve formatted once, to compare and to write.
	if wrote, err = WriteFile(p, Format(sample())); err != nil || wrote {
		t.Fatalf("unchanged WriteFile: wrote=%v err=%v", wrote, err)
	}
	st2, _ := os.Stat(p)
	if !st1.ModTime().Equal(st2.ModTime()) {
		t.Error("an unchanged lock was rewritten")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
	l, _, diags := Load(p)
	if diags.HasErrors() || len(l.Modules) != 3 {
		t.Fatalf("load: %v, %d modules", diags, len(l.Modules))
	}
	empty, src, diags := Load(filepath.Join(dir, "missing.hcl"))
	if diags.HasErrors() || src != nil || len(empty.Modules) != 0 {
		t.Error("a missing lock is not an empty one")
	}
}

func FuzzParse(f *testing.F) {
	f.Add(Format(sample()))
	f.Add(Format(promotedSample()))
	f.Add([]byte(`module "x" { policy = "exact" }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		// Whatever the fast path accepts, hclparse reads alike.
		agree(t, src)
		l, diags := Parse(src, "fuzz.lock.hcl")
		if diags.HasErrors() {
			return
		}
		// Whatever parses cleanly formats, and formats to a fixed point.
		out := Format(l)
		l2, diags := Parse(out, "again.lock.hcl")
		if diags.HasErrors() {
			t.Fatalf("formatted lock does not parse: %v\n%s", diags, out)
		}
		if again := Format(l2); string(again) != string(out) {
			t.Fatalf("format not a fixed point:\n%s", cmp.Diff(string(out), string(again)))
		}
		// Sum is the hash of what Format writes.
		if Sum(l) != sha256.Sum256(out) {
			t.Fatalf("Sum is not the SHA-256 of Format:\n%s", out)
		}
		// Equal agrees: what formats alike is equal.
		if !Equal(l, l2) {
			t.Fatalf("Equal says the lock and its round trip differ:\n%s", out)
		}
	})
}

// TestRemoveStale: the temporary files of killed writes go; anything else
// in the folder stays.
func TestRemoveStale(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, DefaultPath)
	files := map[string]bool{ // name → removed
		DefaultPath:                      false,
		"." + DefaultPath + "4417286590": true,
		"." + DefaultPath + "12":         true,
		"." + DefaultPath:                false,
		"." + DefaultPath + "x12":        false,
		"." + DefaultPath + ".bak":       false,
		"other.hcl1234":                  false,
	}
	for f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(filepath.Join(dir, "."+DefaultPath+"99"), 0o755) // not a file
	removed, err := RemoveStale(p)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for f, gone := range files {
		_, err := os.Stat(filepath.Join(dir, f))
		if gone {
			want = append(want, filepath.Join(dir, f))
			if err == nil {
				t.Errorf("%s was left", f)
			}
		} else if err != nil {
			t.Errorf("%s was removed", f)
		}
	}
	slices.Sort(want)
	if diff := cmp.Diff(want, removed); diff != "" {
		t.Errorf("removed (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "."+DefaultPath+"99")); err != nil {
		t.Error("a folder was removed")
	}
}

// TestBrokenLockSaysWhatWorks: a lock pin cannot read is not one "pin
// resolve" can rewrite (it refuses the same file), so the diagnostic says
// what does work.
func TestBrokenLockSaysWhatWorks(t *testing.T) {
	src := "module \"forge\" {\n  policy = \"exact\"\n  image  = \"registry.example.org/forge/forgejo\"\n  digest = \"sha256:nothex\"\n  source = \"pin\"\n}\n"
	_, diags := Parse([]byte(src), "pin.lock.hcl")
	if !diags.HasErrors() {
		t.Fatal("a broken digest parsed")
	}
	for _, d := range diags {
		if strings.Contains(d.Detail, `Run "pin resolve" to rewrite`) || !strings.Contains(d.Detail, "version control") {
			t.Errorf("%s: %s", d.Summary, d.Detail)
		}
	}
}

// TestSumIsFormatsHash: Sum, which streams what Format writes into the
// hash, gives the SHA-256 of Format's bytes, for locks far larger than its
// buffer, and another for another lock.
func TestSumIsFormatsHash(t *testing.T) {
	for _, l := range []*Lock{nil, {}, sample(), benchLock(10), benchLock(1000)} {
		want := sha256.Sum256(Format(l))
		if got := Sum(l); got != want {
			t.Errorf("Sum of a lock of %d bytes: %x, want %x", len(Format(l)), got, want)
		}
	}
	if Sum(benchLock(1000)) == Sum(benchLock(999)) {
		t.Error("two locks, one sum")
	}
}
