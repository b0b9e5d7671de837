package resolve

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Masterminds/semver/v3"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/image"
	"github.com/pin-tool/pin/internal/version"
)

// The scenario language, one line per case (after mvs_test.go):
//
//	policy  pin  running  upstream  options  → want
//
// An image is written "tag", "tag/2026-08-20" (with a build date),
// "tag+1.2.3" (with a version label) or "-/2026-08-20" (no tag). Its digest
// is derived from the whole word, so the same word is the same image.
// running is a comma-separated list, one container per host; a leading "!"
// marks a stopped container. upstream lists the registry's tags ("-" for
// none). options: allow, oneway, restore, pre, anyvariant, c=<constraint>,
// tag=<floating tag>, re=<tags regex>, v=<versioning>.
// want: pin, running:<host index>, upstream:<tag>, refuse:<kind>, error.
const scenarios = `
exact            1.22.6        1.27.3             -                        -                 → refuse:downgrade
exact            1.22.6        1.22.6             -                        -                 → pin
exact            1.27.3        1.22.6             -                        -                 → pin
exact            1.22.6        -                  -                        -                 → pin
exact            1.22.6        !1.27.3            -                        -                 → refuse:downgrade
exact            1.22.6        1.27.3             -                        allow             → pin
exact            1.22.6        1.27.3             -                        allow,oneway      → refuse:downgrade
exact            1.22.6        1.27.3             -                        allow,oneway,restore → pin
exact            1.2.3         1.2.3/1970-01-01   -                        -                 → refuse:unknown-order
exact            -/2026-08-20  -/2026-09-17       -                        -                 → refuse:downgrade
exact            1.22.6        1.27-alpine        -                        -                 → refuse:unknown-order
exact            1.22.6        1.27-alpine        -                        anyvariant        → refuse:downgrade
at-least-running 1.22.6        1.27.3             -                        -                 → running:0
at-least-running 1.27.3        1.22.6             -                        -                 → pin
at-least-running 6.10.1        6.10.3,6.10.2      -                        -                 → running:0
at-least-running 6.10.1        6.10.2,6.10.3      -                        -                 → running:1
at-least-running 6.10.1        6.10.3,!7.0.0      -                        -                 → running:1
at-least-running -/2026-08-20  -/2026-09-17       -                        -                 → running:0
at-least-running -/2026-09-17  -/2026-08-20       -                        -                 → pin
at-least-running latest        latest+2.0.0       -                        -                 → refuse:unknown-order
at-least-running 1.2.3         1.2.3/0001-01-01   -                        -                 → refuse:unknown-order
at-least-running 1.2.3         1.2.3/0001-01-01   -                        allow             → pin
at-least-running -             1.27.3             -                        -                 → running:0
at-least-running 1.27.3        -                  -                        -                 → pin
track-upstream   1.22.6        1.25.0             1.22.6,1.27.3,1.26.0     -                 → upstream:1.27.3
track-upstream   1.22.6        1.28.0             1.22.6,1.27.3            -                 → running:0
track-upstream   1.22.6        -                  1.22.6,1.27.3,1.28.0-rc.1 -                → upstream:1.27.3
track-upstream   1.22.6        -                  1.27.3,1.28.0-rc.1       pre               → upstream:1.28.0-rc.1
track-upstream   1.22.6        -                  1.22.6,1.27.3,2.0.0      c=<2              → upstream:1.27.3
track-upstream   1.22.6        -                  1.22.6,1.27.3,1.22.7     re=^1\.22\.       → upstream:1.22.7
track-upstream   1.22.6-rootless -                1.27.3,1.23.0-rootless   -                 → upstream:1.23.0-rootless
track-upstream   v1.2          -                  v1.2,v1.3,v1.3.1,1.4     -                 → upstream:v1.3
track-upstream   -             -                  1.2.0,1.3.0,1.3,latest   -                 → upstream:1.3.0
track-upstream   -             1.5.0-alpine       1.5.1-alpine,1.6.0       -                 → upstream:1.5.1-alpine
track-upstream   -             -/2026-08-20       latest/2026-09-17        tag=latest        → upstream:latest/2026-09-17
track-upstream   -             -/2026-09-17       latest/2026-08-20        tag=latest        → running:0
track-upstream   -             -/1970-01-01       latest/2026-08-20        tag=latest        → refuse:unknown-order
track-upstream   -             2026.09.17         2026.08.20,2026.10.01    v=calver          → upstream:2026.10.01
track-upstream   -             -                  latest                   -                 → error
exact            -+1.27.3      1.27+1.27.9        -                        -                 → refuse:downgrade
at-least-running -+1.27.3      1.27+1.27.9        -                        -                 → running:0
exact            1.27.3/2026-01-01 latest/2026-06-01+1.27 -                -                 → refuse:downgrade
exact            1.26.9/2026-10-01 v1.27.3/2026-09-01 -                   -                 → refuse:unknown-order
exact            1.26.9/2026-10-01 1.27.3-rootless/2026-09-01 -           -                 → refuse:unknown-order
exact            1.27.0/2026-10-01 1.27/2026-09-01  -                     -                 → refuse:unknown-order
exact            1.22.6        1.22+1.22.5        -                        -                 → pin
exact            1.22.4        1.22+1.22.5        -                        -                 → refuse:downgrade
track-upstream   -             -                  1733222400,1764758400,999 v=numeric         → upstream:1764758400
track-upstream   -             -                  20261203091500,20261202120000 v=calver      → upstream:20261203091500
exact            1.30.0+1.22.6 1.27.3             -                        -                 → error
exact            1.30.0        1.27.3             1.30.0/2026-09-01        -                 → refuse:unknown-order
at-least-running 1.30.0        1.27.3             1.30.0/2026-09-01        -                 → refuse:unknown-order
at-least-running 1.22.0        1.27.3             1.22.0/2026-09-01        -                 → running:0
exact            1.30.0        1.27.3             1.30.0                   -                 → pin
track-upstream   -             -                  1.0.0,2.0.0+1.0.0        -                 → upstream:1.0.0
track-upstream   -             -                  2.0.0+1.0.0              -                 → refuse:unknown-order
track-upstream   -             0.9.0              0.9.0,1.0.0,2.0.0+1.0.0  -                 → upstream:1.0.0
track-upstream   -             -                  2.0+1.0.0                tag=2.0           → refuse:unknown-order
track-upstream   -             -                  1.0.0,2.0.0+2.0.0        -                 → upstream:2.0.0
`

var scenarioLine = regexp.MustCompile(`^(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+→\s+(\S+)$`)

func TestScenarios(t *testing.T) {
	for i, line := range strings.Split(strings.TrimSpace(scenarios), "\n") {
		line = strings.TrimSpace(line)
		m := scenarioLine.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("scenario %d does not parse: %q", i, line)
		}
		t.Run(fmt.Sprintf("%02d", i), func(t *testing.T) {
			d := runScenario(t, m[1], m[2], m[3], m[4], m[5])
			got := outcomeOf(d)
			if got != m[6] {
				t.Errorf("%s\n got %s\nwant %s\nreason: %v %v %v", line, got, m[6], reason(d), d.Refusal(), d.Err())
			}
			checkInvariant(t, d)
		})
	}
}

func reason(d *Decision) string {
	if d.New() != nil {
		return d.New().Reason
	}
	return ""
}

func outcomeOf(d *Decision) string {
	switch {
	case d.Err() != nil:
		return "error"
	case d.Refusal() != nil:
		return "refuse:" + string(d.Refusal().Kind)
	case d.New() == nil:
		return "nothing"
	case d.New().Source == "running":
		for i, f := range d.Floors {
			if f.Kind == FloorContainer && f.Image.Digest == d.New().Digest {
				return fmt.Sprintf("running:%d", hostIndex(f.Observation.Host, i))
			}
		}
		return "running:?"
	case d.New().Source == "upstream":
		return "upstream:" + d.New().Tag + datePart(d.New().Created)
	}
	return string(d.New().Source)
}

func hostIndex(h string, fallback int) int {
	var n int
	if _, err := fmt.Sscanf(h, "host-%d", &n); err == nil {
		return n
	}
	return fallback
}

func datePart(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return "/" + t.Format("2006-01-02")
}

// word turns a scenario word into an image.
func word(repo, w string) image.Image {
	sum := sha256.Sum256([]byte(w))
	img := image.Image{Repository: repo, Digest: "sha256:" + hex.EncodeToString(sum[:])}
	tag := w
	if i := strings.IndexByte(tag, '+'); i >= 0 {
		img.Labels = map[string]string{image.LabelVersion: tag[i+1:]}
		tag = tag[:i]
	}
	if i := strings.IndexByte(tag, '/'); i >= 0 {
		t, err := time.Parse("2006-01-02", tag[i+1:])
		if err != nil {
			panic(err)
		}
		img.Created = t
		tag = tag[:i]
	}
	if tag != "-" {
		img.Tag = tag
	}
	return img
}

// fakeRegistry serves images by tag and digest; it is a seam pin owns, for
// the resolver's unit tests only.
type fakeRegistry struct {
	byTag    map[string]image.Image
	byDigest map[string]image.Image
	tags     []string
}

func newFakeRegistry(repo string, words ...string) *fakeRegistry {
	f := &fakeRegistry{byTag: map[string]image.Image{}, byDigest: map[string]image.Image{}}
	for _, w := range words {
		img := word(repo, w)
		if img.Tag != "" {
			f.byTag[img.Tag] = img
			f.tags = append(f.tags, img.Tag)
		}
		f.byDigest[img.Digest] = img
	}
	return f
}

func (f *fakeRegistry) Tags(context.Context, string) ([]string, error) { return f.tags, nil }

func (f *fakeRegistry) Image(_ context.Context, repo, ref, _ string) (image.Image, error) {
	if img, ok := f.byTag[ref]; ok {
		return img, nil
	}
	if img, ok := f.byDigest[ref]; ok {
		img.Tag = ""
		return img, nil
	}
	return image.Image{}, fmt.Errorf("%s:%s: %w", repo, ref, image.ErrNotFound)
}

const repo = "registry.example.org/team/svc"

func runScenario(t *testing.T, policy, pin, running, upstream, options string) *Decision {
	t.Helper()
	p := Resolve(context.Background(), scenarioInput(t, policy, pin, running, upstream, options))
	if len(p.Decisions) != 1 {
		t.Fatalf("decisions = %d", len(p.Decisions))
	}
	return p.Decisions[0]
}

// moduleOption applies one scenario option to m (see the scenario
// language above); false when k is not a module option.
func moduleOption(m *catalogue.Module, k, v string) bool {
	switch k {
	case "allow":
		m.AllowDowngrade = "tested"
	case "oneway":
		m.OneWay = true
	case "restore":
		m.Restore = "backup-1"
	case "pre":
		m.Prerelease = true
	case "anyvariant":
		m.AnyVariant = true
	case "c":
		m.ConstraintText = v
		m.Constraint = must(semver.NewConstraint(v))
	case "tag":
		m.Tag = v
	case "re":
		m.Tags = regexp.MustCompile(v)
	case "v":
		m.Versioning = must(version.ParseScheme(v))
	default:
		return false
	}
	return true
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// checkInvariant is docs/design.md's promise, checked on a decision: a lock
// entry is equal to or newer than every running observation, or carries an
// accepted downgrade reason (and a restore for a one_way module).
func checkInvariant(t *testing.T, d *Decision) {
	t.Helper()
	if d.New() == nil {
		if d.Refusal() == nil && d.Err() == nil {
			t.Fatal("no lock entry, no refusal and no error")
		}
		return
	}
	locked := image.Image{Repository: d.New().Image, Tag: d.New().Tag, Digest: d.New().Digest, ConfigDigest: d.New().Config, Platforms: d.New().Platforms, Created: d.New().Created}
	if d.New().Version != "" {
		locked.Labels = map[string]string{image.LabelVersion: d.New().Version}
	}
	opts := orderOptions(d.Module, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	for _, o := range d.Floors {
		c := compare(locked, o.Image, opts)
		if c == "newer" || c == "equal" {
			continue
		}
		if d.New().AllowDowngrade == "" {
			t.Fatalf("invariant broken: locked %s is %s than %s (%s) with no allow_downgrade", locked.Ref(), c, o.Where(), o.Image.Ref())
		}
		if d.Module.OneWay && d.New().Restore == "" {
			t.Fatalf("invariant broken: one_way module downgraded without restore")
		}
	}
	if slices.ContainsFunc(d.Floors, func(f Floor) bool { return f.Image.Digest == "" }) && d.New().Source == "running" && d.New().Digest == "" {
		t.Fatal("locked a running image without a registry digest")
	}
}
