package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// guideStep is one step of a guide: a command ("$ " line of a console
// block) with the lines printed after it, or text to append to a file
// (the fenced block after a line "Append to `FILE`:").
type guideStep struct {
	cmd        []string
	out        []string
	file, text string
}

// guideSteps are the steps of the guide at path, in order.
func guideSteps(t *testing.T, path string) []guideStep {
	t.Helper()
	var steps []guideStep
	lines := strings.Split(string(mustRead(t, path)), "\n")
	appendTo := ""
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if f, ok := strings.CutPrefix(l, "Append to `"); ok && strings.HasSuffix(f, "`:") {
			appendTo = strings.TrimSuffix(f, "`:")
			continue
		}
		if !strings.HasPrefix(l, "```") || l == "```" {
			continue
		}
		kind := strings.TrimPrefix(l, "```")
		var body []string
		for i++; i < len(lines) && lines[i] != "```"; i++ {
			body = append(body, lines[i])
		}
		switch {
		case appendTo != "":
			steps = append(steps, guideStep{file: appendTo, text: strings.Join(body, "\n") + "\n"})
			appendTo = ""
		case kind == "console":
			for _, b := range body {
				if cmd, ok := strings.CutPrefix(b, "$ "); ok {
					steps = append(steps, guideStep{cmd: strings.Fields(cmd)})
				} else if len(steps) > 0 {
					steps[len(steps)-1].out = append(steps[len(steps)-1].out, b)
				}
			}
		}
	}
	return steps
}

// TestHelmGuide: every command of docs/guides/helm.md, run in order on
// the guide's chart (the shop chart of internal/helmvalues/testdata, its
// images in an OCI layout mirror), prints what the guide says it prints,
// word for word ("…" stands for characters left out), and exits 0 unless
// the guide says "(exit N)" on the line after it; helm template runs the
// real helm (skipped without it, failed under CI).
func TestHelmGuide(t *testing.T) {
	w := shopWorld(t)
	w.write([]string{"registry.example.org"}, "")
	runGuide(t, w, filepath.Join(repoRoot, "docs", "guides", "helm.md"))
}

// TestComposeGuide: every command of docs/guides/compose-init.md, run in order
// on its Compose file (cmd/pin/testdata/guides/compose.yaml), its images
// in an OCI layout mirror, prints what the guide says.
func TestComposeGuide(t *testing.T) {
	w := newWorld(t)
	for _, im := range [][2]string{
		{"registry.example.org/social/postgres", "16.4"},
		{"registry.example.org/social/app", "latest"},
		{"registry.example.org/social/tools", "1.2"},
	} {
		w.tag(im[0], im[1], w.build(im[0]+":"+im[1], "", "2026-11-01T00:00:00Z"))
	}
	w.write([]string{"registry.example.org"}, "")
	writeFile(t, filepath.Join(w.dir, "compose.yaml"), string(mustRead(t, filepath.Join("testdata", "guides", "compose.yaml"))))
	runGuide(t, w, filepath.Join(repoRoot, "docs", "guides", "compose-init.md"))
}

// runGuide runs the steps of the guide at path in w's folder.
func runGuide(t *testing.T, w *world, path string) {
	t.Helper()
	steps := guideSteps(t, path)
	if len(steps) == 0 {
		t.Fatal("the guide has no console block")
	}
	for _, st := range steps {
		if st.file != "" {
			f, err := os.OpenFile(filepath.Join(w.dir, st.file), os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(st.text)
			f.Close()
			continue
		}
		cmd := st.cmd
		var got string
		code := 0
		switch cmd[0] {
		case "pin":
			r := pin(t, w.dir, cmd[1:]...)
			got, code = r.stdout+r.stderr, r.code
		case "cat":
			got = string(mustRead(t, filepath.Join(w.dir, cmd[1])))
		case "helm":
			got = testenv.HelmRun(t, testenv.Helm(t), w.dir, cmd[1:]...)
		default:
			t.Fatalf("the guide runs %q, which this test does not", cmd[0])
		}
		want, wantCode := st.out, 0
		if len(want) > 0 && strings.HasPrefix(want[len(want)-1], "(exit ") {
			wantCode = int(want[len(want)-1][len("(exit ")] - '0')
			want = want[:len(want)-1]
		}
		if os.Getenv("PIN_GUIDE_SHOW") != "" {
			t.Logf("$ %s\n%s(exit %d)", strings.Join(cmd, " "), got, code)
		}
		if code != wantCode {
			t.Errorf("%s: exit %d, the guide says %d\n%s", strings.Join(cmd, " "), code, wantCode, got)
		}
		reproduces(t, strings.Join(cmd, " "), want, got)
	}
}
