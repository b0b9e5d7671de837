package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// guideFolder makes the fresh folder the offline and CI guides start
// from: the incident's snapshot as mesh-1.json, its registry as the mirror
// folder (as the guide's block after folderMarker says), and the guide's
// own catalogue, its first block after marker, as catalogue.hcl.
func guideFolder(t *testing.T, guide, folderMarker, marker string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "mirror"), os.DirFS(filepath.Join(repoRoot, "examples", "incident", "registry"))); err != nil {
		t.Fatal(err)
	}
	snap := mustRead(t, filepath.Join(repoRoot, "examples", "incident", "mesh-1.json"))
	if err := os.WriteFile(filepath.Join(dir, "mesh-1.json"), snap, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, l := range docBlock(t, guide, folderMarker) {
		if l != "" && l != "cp /path/to/pin/examples/incident/mesh-1.json mesh-1.json" && l != "cp -r /path/to/pin/examples/incident/registry mirror" {
			t.Fatalf("%s: the folder's commands changed (%q): update guideFolder", guide, l)
		}
	}
	cat := strings.Join(docBlock(t, guide, marker), "\n")
	if !strings.HasPrefix(cat, "host ") {
		t.Fatalf("%s: no catalogue after %q:\n%s", guide, marker, cat)
	}
	if err := os.WriteFile(filepath.Join(dir, "catalogue.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestGuideOffline: the offline guide's catalogue, commands and outputs,
// word for word.
func TestGuideOffline(t *testing.T) {
	const guide = "docs/guides/offline.md"
	dir := guideFolder(t, guide, "Here they are the incident's", "Then `catalogue.hcl`:")
	r := pin(t, dir, "--offline", "resolve")
	if r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin --offline resolve", docBlock(t, guide, "`pin --offline resolve` takes"), r.stdout)
	r = pin(t, dir, "--offline", "outdated")
	if r.code != exitOK {
		t.Fatalf("outdated: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin --offline outdated", docBlock(t, guide, "and `pin --offline outdated` reports"), trimLines(r.stdout))
}

// TestGuideCI: the CI guide's pull request that would downgrade, word for
// word: the warning before a lock, the lock, then the refusal and the
// error annotation once forge's policy is exact.
func TestGuideCI(t *testing.T) {
	const guide = "docs/guides/ci.md"
	dir := guideFolder(t, guide, "(in CI the catalogue names the real", "and `catalogue.hcl`:")
	r := pin(t, dir, "outdated", "--format", "github")
	if r.code != exitOK {
		t.Fatalf("outdated before a lock: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin outdated --format github, no lock", docBlock(t, guide, "Before any lock is committed"), r.stdout)
	if r := pin(t, dir, "resolve"); r.code != exitOK {
		t.Fatalf("resolve: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	lockBefore := mustRead(t, filepath.Join(dir, "pin.lock.hcl"))
	if !strings.Contains(string(lockBefore), "1.27.3") {
		t.Fatalf("the lock does not name 1.27.3, as the guide says:\n%s", lockBefore)
	}
	editFile(t, filepath.Join(dir, "catalogue.hcl"), func(s string) string {
		return strings.Replace(s, `policy = "at-least-running"`, `policy = "exact"`, 1)
	})
	r = pin(t, dir, "resolve", "--check")
	if r.code != exitFindings {
		t.Fatalf("resolve --check, exact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin resolve --check, exact", docBlock(t, guide, "`pin resolve --check` refuses it"), r.stdout)
	r = pin(t, dir, "outdated", "--format", "github")
	if r.code != exitFindings {
		t.Fatalf("outdated, exact: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	reproduces(t, "pin outdated --format github, exact", docBlock(t, guide, "puts the error on the line"), r.stdout)
	if got := mustRead(t, filepath.Join(dir, "pin.lock.hcl")); string(got) != string(lockBefore) {
		t.Errorf("the refusals changed the lock")
	}
}

// mdLink matches a Markdown link's target: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// slug is a heading's anchor as GitHub makes it: lower case, punctuation
// but "-" and "_" dropped, spaces made "-".
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the anchors of a Markdown file's headings (outside fenced
// blocks), a repeated one with GitHub's -1, -2 suffixes.
func anchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for l := range strings.Lines(string(mustRead(t, path))) {
		if strings.HasPrefix(l, "```") {
			fenced = !fenced
		}
		if fenced || !strings.HasPrefix(l, "#") {
			continue
		}
		s := slug(strings.TrimSpace(strings.TrimLeft(l, "#")))
		if n := seen[s]; n > 0 {
			out[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// TestDocLinks: every relative link of the README, CONTRIBUTING.md and the
// documents under docs/ names a file of the repository, and a heading of
// it where the link names one.
func TestDocLinks(t *testing.T) {
	docs := []string{"README.md", "CONTRIBUTING.md"}
	for _, pat := range []string{"docs/*.md", "docs/guides/*.md", "docs/cli/*.md"} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pat))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			rel, _ := filepath.Rel(repoRoot, p)
			docs = append(docs, rel)
		}
	}
	for _, doc := range docs {
		for _, m := range mdLink.FindAllStringSubmatch(string(mustRead(t, filepath.Join(repoRoot, doc))), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(target, "#")
			path := filepath.Join(repoRoot, doc)
			if file != "" {
				path = filepath.Join(filepath.Dir(path), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: no such file", doc, target)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchors(t, path)[frag] {
				t.Errorf("%s: link %s: %s has no heading #%s", doc, target, filepath.Base(path), frag)
			}
		}
	}
}

// TestDocTestNames: every test the documents name (`TestX`, or a subtest
// `TestX/case`) is a test function of the repository, so that the fault
// table and the guides never cite a test that was renamed or removed.
func TestDocTestNames(t *testing.T) {
	defined := map[string]bool{}
	fn := regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
	err := filepath.WalkDir(repoRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(p, "_test.go") {
			for _, m := range fn.FindAllStringSubmatch(string(mustRead(t, p)), -1) {
				defined[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs := []string{"README.md", "CONTRIBUTING.md"}
	for _, pat := range []string{"docs/*.md", "docs/guides/*.md"} {
		m, _ := filepath.Glob(filepath.Join(repoRoot, pat))
		for _, f := range m {
			rel, _ := filepath.Rel(repoRoot, f)
			docs = append(docs, rel)
		}
	}
	cited := regexp.MustCompile("`(Test\\w+)(?:/[^`]*)?`")
	n := 0
	for _, doc := range docs {
		for _, m := range cited.FindAllStringSubmatch(string(mustRead(t, filepath.Join(repoRoot, doc))), -1) {
			n++
			if !defined[m[1]] {
				t.Errorf("%s names %s, which no test file defines", doc, m[1])
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d tests named in the documents: the pattern no longer matches them", n)
	}
}
