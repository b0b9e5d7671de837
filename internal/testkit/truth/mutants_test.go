package truth

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Mutant is one rule broken on purpose: an exact anchor in a production
// file and what replaces it. The anchor must occur exactly once, so that a
// mutant cannot rot silently when the code it breaks moves.
type Mutant struct {
	Name        string
	File        string // from the repository root
	Anchor      string
	Replacement string
	// Rule is what the mutant breaks, in docs/design.md's words.
	Rule string
	// Pending is set while today's code breaks the rule itself: the
	// anchor is the shape the fix is expected to have. Update Anchor and
	// Replacement when the fix lands, and clear Pending.
	Pending string
	// Also are more edits of the same mutant, where one rule is kept in
	// two places (each anchor must occur exactly once too).
	Also []Edit
}

// Edit is one more anchor of a mutant and what replaces it.
type Edit struct{ File, Anchor, Replacement string }

// Mutants lists the rules TestTruthMutants breaks one at a time.
var Mutants = []Mutant{
	{
		Name:        "variants ignored",
		File:        "internal/order/order.go",
		Anchor:      "if o.AnyVariant || version.SameVariant(x, y) {",
		Replacement: "if true {",
		Rule:        "versions compare only within one variant: prefix, suffix and precision (1.27 is not 1.27.0)",
	},
	{
		Name:        "pre-release newer than its release",
		File:        "internal/version/compare.go",
		Anchor:      "\tcase a.Pre == \"\":\n\t\treturn 1\n\tcase b.Pre == \"\":\n\t\treturn -1\n",
		Replacement: "\tcase a.Pre == \"\":\n\t\treturn -1\n\tcase b.Pre == \"\":\n\t\treturn 1\n",
		Rule:        "a release is newer than any of its pre-releases (1.28.0-rc.1 < 1.28.0)",
	},
	{
		Name:        "future dates plausible",
		File:        "internal/order/order.go",
		Anchor:      "return o.Now.IsZero() || !t.After(o.Now)",
		Replacement: "return true",
		Rule:        "a build date after now is unknown, not new",
	},
	{
		Name:        "epoch dates plausible",
		File:        "internal/order/order.go",
		Anchor:      "if t.IsZero() || t.Before(earliestPlausible) {",
		Replacement: "if t.IsZero() {",
		Rule:        "reproducible builds' epoch dates (1970, 0001) are unknown, not old",
	},
	{
		Name:        "unknown order passes",
		File:        "resolve/policy.go",
		Anchor:      "if res.Cmp == order.Newer || res.Cmp == order.Equal {\n\t\t\tcontinue",
		Replacement: "if res.Cmp != order.Older {\n\t\t\tcontinue",
		Rule:        "an unknown order never counts as newer: pin refuses",
	},
	{
		Name:        "one_way downgrade without restore",
		File:        "resolve/allow.go",
		Anchor:      `return catalogue.HasWords(downgrade) && (!m.OneWay || catalogue.HasWords(restore))`,
		Replacement: `return catalogue.HasWords(downgrade)`,
		Rule:        "a one_way module needs restore as well as allow_downgrade",
	},
	{
		Name:        "plan calls unknown the same",
		File:        "resolve/cutover.go",
		Anchor:      "\t}\n\treturn VerdictUnknown\n}",
		Replacement: "\t}\n\treturn VerdictSame\n}",
		Rule:        "a cutover whose order is unknown is not safe",
	},
	{
		Name:        "outdated hides behind-running",
		File:        "resolve/outdated.go",
		Anchor:      "c.add(StatusBehindRunning, ",
		Replacement: "c.add(StatusCurrent, ",
		Rule:        "outdated reports a host that runs something newer than the lock",
	},
	{
		Name:        "track-upstream picks the oldest tag",
		File:        "resolve/upstream.go",
		Anchor:      "best := slices.MaxFunc(all, func(a, b cand) int {",
		Replacement: "best := slices.MinFunc(all, func(a, b cand) int {",
		Rule:        "track-upstream locks the newest candidate (sound, but not live: only the clean-class liveness check can see it)",
	},
	{
		Name:        "the reason carries an address",
		File:        "resolve/policy.go",
		Anchor:      `reason := fmt.Sprintf("%s %s%s", f.runs(), dc.floorLabel(f, primary), than)`,
		Replacement: `reason := fmt.Sprintf("%s %s%s %p", f.runs(), dc.floorLabel(f, primary), than, new(int))`,
		Rule:        "the same inputs give the same lock bytes",
	},
	{
		Name:        "stopped containers not floors",
		File:        "resolve/floors.go",
		Anchor:      `return o.State != "created" && o.State != observe.StateScaledToZero && !o.Ephemeral()`,
		Replacement: `return o.Running()`,
		Rule:        "every container a host reports is a floor, whatever its state, except one created and never started",
	},
	{
		Name:        "previous lock not a floor",
		File:        "resolve/floors.go",
		Anchor:      "\tif oldImg != nil {\n\t\tout = append(out, Floor{Kind: FloorLocked, Image: *oldImg, Entry: old})\n\t}\n",
		Replacement: "",
		Rule:        "the previous lock entry is a floor: the lock is monotone",
	},
	{
		Name:        "tags believed over labels",
		File:        "internal/order/claim.go",
		Anchor:      "\t\tif !version.Agree(c.Tag, c.Label) {\n\t\t\tc.Kind = Conflicting\n\t\t\treturn c\n\t\t}\n\t\tc.Kind, c.Version = FromBoth, c.Tag\n\t\tif c.Label.Precision() > c.Tag.Precision() {",
		Replacement: "\t\tc.Kind, c.Version = FromBoth, c.Tag\n\t\tif false {",
		Rule:        "a tag and a label that disagree make the version conflicting: it cannot decide",
	},
	{
		Name:        "tags believed where no label can contradict them",
		File:        "resolve/claims.go",
		Anchor:      "if res.Cmp == order.Unknown || res.Rule == order.RuleContent {",
		Replacement: "if true {",
		Rule:        "a tag written next to a digest is a claim: where the image has no label, the registry must say the tag names that digest",
	},
	{
		Name:        "a removed module's floor forgotten",
		File:        "resolve/resolve.go",
		Anchor:      "\t\tdefault:\n\t\t\tp.Retired = append(p.Retired, Retired{Entry: om, Now: true})\n",
		Replacement: "\t\tdefault:\n",
		Rule:        "a module removed from the catalogue leaves its entry in the lock (retired): added back, under its name or another, it is held to it",
	},
	{
		Name:        "a renamed module's floor forgotten",
		File:        "resolve/takeover.go",
		Anchor:      "\t\t\tif covers(ro, name) {\n",
		Replacement: "\t\t\tif false && covers(ro, name) {\n",
		Rule:        "a module renamed takes over the floor of the entry that recorded its containers, also once they are gone",
	},
	{
		Name:        "any entry of an index is the same content",
		File:        "internal/order/order.go",
		Anchor:      "\tif d, ok := o.entryFor(b, a); ok && d == a.Digest && d != \"\" {\n\t\treturn true\n\t}\n\tif d, ok := o.entryFor(a, b); ok && d == b.Digest && d != \"\" {\n\t\treturn true\n\t}\n",
		Replacement: "\tfor _, d := range b.Platforms {\n\t\tif d == a.Digest && d != \"\" {\n\t\t\treturn true\n\t\t}\n\t}\n\tfor _, d := range a.Platforms {\n\t\tif d == b.Digest && d != \"\" {\n\t\t\treturn true\n\t\t}\n\t}\n",
		Rule:        "same content for an index is the entry a pull on the host's platform gets (the first that matches), never any entry",
	},
	{
		Name:        "host tags believed",
		File:        "resolve/claims.go",
		Anchor:      "\t\t\tc.hosted[o.Image.Tag+\"@\"+o.Image.Digest] = true\n",
		Replacement: "\t\t\tc.vouch(o.Image)\n",
		Rule:        "a tag a host holds may be a docker tag given on the host: where it alone says the version and would decide in the image's favour, the registry must say it names that digest",
	},
	{
		Name:        "resolve MODULE records every host as read",
		File:        "resolve/hosts.go",
		Anchor:      "held(h.Name) || in.Record.ReadForEvery(h.Name)",
		Replacement: "held(h.Name) || in.Record.Read(h.Name)",
		Rule:        "a command records as read exactly what it decided: \"pin resolve MODULE\" decides no other module against a host that joined",
	},
	{
		Name:        "lock --from-host says up to date with a host unread",
		File:        "resolve/resolve.go",
		Anchor:      "if unread := unknownHosts(in, m, d.Old); hasHost(m, in.Record.Host) && len(unread) > 0 {",
		Replacement: "if unread := unknownHosts(in, m, d.Old); false && hasHost(m, in.Record.Host) && len(unread) > 0 {",
		Rule:        "lock --from-host refuses a module it touches while one of its hosts was never read, whether or not its own reading changes the entry",
	},
	{
		Name:        "lock lines believed over digests",
		File:        "resolve/content.go",
		Anchor:      "img, state, err = describe(ctx, reg, m, e.Digest, platform)",
		Replacement: "img, state, err = image.Image{}, contentOffline, nil",
		Rule:        "a lock entry's config, version and created are checked against what its digest names",
	},
	// Environments and promotion (histories with environments).
	{
		Name:        "promotion counts a stopped container as running",
		File:        "internal/promote/promote.go",
		Anchor:      "if in.From.has(o.Host) && o.Running() {",
		Replacement: "if in.From.has(o.Host) && o.State != host.StateCreated {",
		Rule:        "a promotion copies what FROM's hosts run now, not what they ran",
	},
	{
		Name:        "promotion reads only the first FROM host (skew passes)",
		File:        "internal/promote/promote.go",
		Anchor:      "if d := distinct(running); len(d) > 1 {",
		Replacement: "if d := distinct(running[:1]); len(d) > 1 {",
		Rule:        "a promotion copies the build every host of FROM that runs the module runs; hosts that disagree (skew) are refused",
	},
	{
		Name:        "soak ignored",
		File:        "internal/promote/promote.go",
		Anchor:      "if soak := in.To.Soak; soak > 0 {",
		Replacement: "if soak := in.To.Soak; false && soak > 0 {",
		Rule:        "a build is promoted once it has run in FROM for TO's soak",
	},
	{
		Name:        "soak counted from the earliest start (a restart does not restart it)",
		File:        "internal/promote/promote.go",
		Anchor:      "latest := slices.MaxFunc(running, func(a, b observe.Observation) int { return a.StartedAt.Compare(b.StartedAt) })",
		Replacement: "latest := slices.MinFunc(running, func(a, b observe.Observation) int { return a.StartedAt.Compare(b.StartedAt) })",
		Rule:        "the soak counts on every host of FROM from the container's last start: a restart starts it again",
	},
	{
		Name:        "crashed, restarting or unhealthy FROM containers promoted",
		File:        "internal/promote/promote.go",
		Anchor:      "if refusal != nil && in.Pick == nil {",
		Replacement: "if false && refusal != nil && in.Pick == nil {",
		Rule:        "a build is promoted only once it runs healthy on every host of FROM that runs it: running, healthy where checked, no restart within the soak",
	},
	{
		Name:        "a failing health check taken for healthy",
		File:        "internal/promote/health.go",
		Anchor:      "case host.HealthUnhealthy, host.HealthStarting:",
		Replacement: "case host.HealthStarting:",
		Rule:        "a container whose health check fails does not prove its build",
	},
	{
		Name:        "paused or restarting taken for running",
		File:        "internal/promote/health.go",
		Anchor:      "if o.State != host.StateRunning {",
		Replacement: "if !o.Running() {",
		Rule:        "a paused container, or one its engine restarts, does not prove its build: only one that runs does",
	},
	{
		Name:        "min_age ignored",
		File:        "resolve/cooldown.go",
		Anchor:      "if age >= minAge {",
		Replacement: "if true || age >= minAge {",
		Rule:        "a new upstream tag waits min_age before a track-upstream module takes it",
	},
	{
		Name:        "min_age counted from the earlier clock (a forged or old build date skips the wait)",
		File:        "resolve/cooldown.go",
		Anchor:      "if created := dc.opts.Created(img); created.After(seen) {",
		Replacement: "if created := dc.opts.Created(img); !created.IsZero() && created.Before(seen) {",
		Rule:        "a candidate's age counts from the later of its build date and the first time pin saw it",
	},
	{
		Name:        "promotion below TO's floors",
		File:        "internal/promote/promote.go",
		Anchor:      "if v.Refusal != \"\" {",
		Replacement: "if false && v.Refusal != \"\" {",
		Rule:        "a promotion is never a downgrade of what TO runs or locks",
	},
	{
		Name:        "a refused promotion writes the modules it could promote",
		File:        "internal/promote/promote.go",
		Anchor:      "if res.Refused() || len(entries) == 0 {",
		Replacement: "if len(entries) == 0 {",
		Rule:        "modules promoted together are one unit: a refusal leaves TO's lock byte-identical",
	},
	{
		Name:        "automatic promotion overrides holds",
		File:        "internal/promote/promote.go",
		Anchor:      "if held != nil && held.Hold != \"\" && in.Pick == nil {",
		Replacement: "if false && held != nil && held.Hold != \"\" && in.Pick == nil {",
		Rule:        "a held entry stays, in automatic promotions too, until its hold is lifted",
	},
	{
		Name:        "resolve drops holds",
		File:        "resolve/resolve.go",
		Anchor:      "case holder(d.Old, d.TakenOver) != nil:",
		Replacement: "case false && holder(d.Old, d.TakenOver) != nil:",
		Rule:        "resolve keeps a held entry at its image until the hold is lifted",
	},
	{
		Name:        "an environment's floors include the other environment's hosts",
		File:        "internal/catalogue/environment.go",
		Anchor:      "\t\t\tif slices.Contains(e.Hosts, ro.Host) {\n\t\t\t\tcp.RunsOn = append(cp.RunsOn, ro)",
		Replacement: "\t\t\tif true {\n\t\t\t\tcp.RunsOn = append(cp.RunsOn, ro)",
		Also: []Edit{{File: "internal/source/environments.go",
			Anchor:      "\tfor _, h := range hosts {\n\t\tif s, ok := all.Snapshots[h]; ok {",
			Replacement: "\tfor h := range all.Snapshots {\n\t\tif s, ok := all.Snapshots[h]; ok {"}},
		Rule: "each environment's floors are its own hosts: production may be locked below what staging runs",
	},
	{
		Name:        "previous entries from the other environment",
		File:        "internal/source/environments.go",
		Anchor:      "e := view.Environments[0]",
		Replacement: "e := cat.Environments[0]",
		Rule:        "each environment's floors are its own previous entries, read from its own lock file",
	},
	// Hosts that move between environments (hostmove.go).
	{
		Name:        "Elsewhere left empty",
		File:        "internal/source/input.go",
		Anchor:      "r := resolve.Record{Host: in.Host, Elsewhere: in.Elsewhere, Only: in.Only}",
		Replacement: "r := resolve.Record{Host: in.Host, Only: in.Only}",
		Rule:        "a host that moves between environments takes its floors with it: what ran on it, recorded by the other environment's lock, is a floor in its new environment",
	},
	{
		Name:        "a partial run is not refused",
		File:        "internal/source/refusals.go",
		Anchor:      "\t\t\tif deciding[m.Environment] {\n\t\t\t\tcontinue\n",
		Replacement: "\t\t\tif true {\n\t\t\t\tcontinue\n",
		Rule:        "a run that rewrites a lock still recording a moved host decides the host's new environment too, or is refused (source.Moved, which pin_env.go calls as cmd/pin does): the rewrite would drop the floor before the other lock took it over",
	},
	// The one record of what a run read, and holds (record.go, hold.go).
	{
		Name:        "a skipped host is recorded as read",
		File:        "resolve/record.go",
		Anchor:      "\t_, no := r.NotRead[h]\n\treturn !no\n",
		Replacement: "\tnr, no := r.NotRead[h]\n\treturn !no || nr.Why == WhySkipped\n",
		Rule:        "what was not read is not known: a host skipped under skip_unreachable is never recorded as read, so that lock --from-host of another host refuses (hosts-not-read) rather than lock below what it runs",
	},
	{
		Name:        "promotion ignores a skipped FROM host",
		File:        "internal/promote/promote.go",
		Anchor:      "if nr, ok := in.Record.Unread(h); ok {",
		Replacement: "if nr, ok := in.Record.Unread(h); ok && nr.Why != resolve.WhySkipped {",
		Rule:        "a host skipped under skip_unreachable is never counted among every host of FROM: what it runs is not known, and the promotion is refused host-not-read",
	},
	{
		Name:        "a hold does not follow its floor",
		File:        "resolve/hold.go",
		Anchor:      "\t\tif e.Hold != \"\" {\n\t\t\treturn e\n",
		Replacement: "\t\tif false && e.Hold != \"\" {\n\t\t\treturn e\n",
		Rule:        "a hold is part of the entry it was placed on and follows it wherever its floor follows (a rename): kept until lifted",
	},
}

// TestTruthMutants breaks each rule of Mutants in a copy of the module and
// requires TestTruth to catch it: some history must fail with the mutant
// that passes without it. On today's code, which breaks some rules itself,
// that is a difference against the baseline; once TestTruth passes, it is
// simply a failure.
func TestTruthMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("the mutation check runs go test once per mutant; skipped with -short")
	}
	// "go test -run TestTruth -truth.steps=N" is about TestTruth, whose
	// name this test's begins with: a run that sets TestTruth's flags
	// leaves the mutants alone.
	flag.Visit(func(f *flag.Flag) {
		if slices.Contains([]string{"truth.steps", "truth.seed", "truth.history", "truth.without", "truth.list", "truth.failures", "truth.stop"}, f.Name) {
			t.Skipf("-%s is set: this run is about TestTruth", f.Name)
		}
	})
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyModule(t, root, dir)
	steps := envInt("PIN_TRUTH_MUTANT_STEPS", 20000)
	base, out := truthRun(t, dir, steps, false)
	if base == nil {
		t.Fatalf("the unmutated copy did not run:\n%s", out)
	}
	t.Logf("baseline: %d of the histories fail", len(base))
	// Where no history fails without a mutant, any failing history with it
	// is a catch: its run stops at the first (most mutants fail within a
	// few hundred steps; the full length is then only played by mutants
	// that survive).
	stop := len(base) == 0
	for _, m := range Mutants {
		t.Run(m.Name, func(t *testing.T) {
			for _, e := range append([]Edit{{m.File, m.Anchor, m.Replacement}}, m.Also...) {
				path := filepath.Join(dir, e.File)
				orig, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("mutant %q: %v", m.Name, err)
				}
				if n := bytes.Count(orig, []byte(e.Anchor)); n != 1 || e.Anchor == "" {
					msg := fmt.Sprintf("mutant %q: its anchor occurs %d times in %s, not once: update the table in mutants_test.go\nanchor: %q", m.Name, n, e.File, e.Anchor)
					if m.Pending != "" {
						msg += "\npending: " + m.Pending + "; write the anchor once the fix lands"
					}
					t.Fatal(msg)
				}
				mutated := bytes.Replace(orig, []byte(e.Anchor), []byte(e.Replacement), 1)
				if err := os.WriteFile(path, mutated, 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.WriteFile(path, orig, 0o644)
			}
			got, out := truthRun(t, dir, steps, stop)
			if got == nil {
				if strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]") {
					t.Fatalf("mutant %q does not build: fix its replacement\n%s", m.Name, out)
				}
				t.Logf("mutant %q made the test crash: caught\n%s", m.Name, tail(out, 20))
				return
			}
			var caught []string
			for n, check := range got {
				if _, ok := base[n]; !ok {
					caught = append(caught, fmt.Sprintf("history %s (%s)", n, check))
				}
			}
			slices.Sort(caught)
			if len(caught) == 0 {
				t.Errorf("mutant %q (breaks: %s) survived: no history fails that passes without it (%d fail with it, %d without)", m.Name, m.Rule, len(got), len(base))
				return
			}
			t.Logf("mutant %q caught by %d histories, e.g. %s", m.Name, len(caught), caught[0])
		})
	}
}

// truthRun runs TestTruth in dir with a fixed seed and returns the failing
// histories (number → check), or nil when the test did not run to its end;
// with stop, only the first.
func truthRun(t *testing.T, dir string, steps int, stop bool) (map[string]string, string) {
	list := filepath.Join(t.TempDir(), "failing")
	// CGO_ENABLED=0 and -trimpath, the suite's configuration
	// (scripts/test, like_release): the copy's packages then compile as
	// the module's own do, whatever folder they are in, so each mutant
	// recompiles only what its edit changes.
	cmd := exec.Command("go", "test", "-trimpath", "-count=1", "-timeout=10m", "-run", "^TestTruth$", "./internal/testkit/truth",
		fmt.Sprintf("-truth.steps=%d", steps), "-truth.seed=20261203", "-truth.list="+list, fmt.Sprintf("-truth.stop=%t", stop))
	cmd.Dir = dir
	cmd.Env = append(slices.DeleteFunc(os.Environ(), func(e string) bool { return strings.HasPrefix(e, "PIN_TRUTH_") }), "CGO_ENABLED=0")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running go test: %v", err)
	}
	b, err := os.ReadFile(list)
	if err != nil {
		return nil, string(out)
	}
	got := map[string]string{}
	for line := range strings.Lines(string(b)) {
		n, check, _ := strings.Cut(strings.TrimSpace(line), " ")
		got[n] = check
	}
	return got, string(out)
}

// copyModule copies the repository's tracked files (git ls-files, else
// every file but .git) from root to dir.
func copyModule(t *testing.T, root, dir string) {
	var files []string
	if out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output(); err == nil {
		for f := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
			files = append(files, f)
		}
	} else {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && d.Name() == ".git" {
				return filepath.SkipDir
			}
			if !d.IsDir() {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(root, f))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted in the worktree, not yet in git
		}
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
