package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// TestNoCatalogueSaysPinInit: with no catalogue (the default file, a
// named one, a folder of none), every command that reads it says that
// pin init writes one, and with which command lines. The messages are
// golden, in both formats (errors are text on stderr). Then each command
// line is run as written, in a folder with a Compose file, a folder of
// manifests and, for --from-host, the host line it says to write (the
// engine the docker CLI reaches: DOCKER_HOST, the test Engine): each
// writes a catalogue that loads.
func TestNoCatalogueSaysPinInit(t *testing.T) {
	var out strings.Builder
	for _, c := range []struct {
		what string
		args []string
	}{
		{"no catalogue.hcl", []string{"resolve"}},
		{"no catalogue.hcl, --format json", []string{"resolve", "--format", "json"}},
		{"plan", []string{"plan", "mesh-1"}},
		{"init --from-host", []string{"init", "--from-host", "local"}},
		{"a catalogue named that is not there", []string{"outdated", "--catalogue", "ops/my catalogue.hcl"}},
		{"a folder of no *.hcl file", []string{"resolve", "--catalogue", "empty"}},
	} {
		dir := t.TempDir()
		os.Mkdir(filepath.Join(dir, "empty"), 0o755)
		r := pin(t, dir, c.args...)
		fmt.Fprintf(&out, "# %s\n$ pin %s\nexit %d\n%s%s\n", c.what, strings.Join(c.args, " "), r.code, r.stdout, r.stderr)
		if r.code != exitInput || r.stdout != "" {
			t.Errorf("%s: exit %d, want %d and nothing on stdout", c.what, r.code, exitInput)
		}
		lines := regexp.MustCompile(`(?m)^  (pin init.*)$`).FindAllStringSubmatch(r.stderr, -1)
		if len(lines) != 3 {
			t.Fatalf("%s: want three pin init command lines:\n%s", c.what, r.stderr)
		}
		for _, l := range lines {
			t.Run(c.what+": "+l[1], func(t *testing.T) { runInitSuggestion(t, r.stderr, l[1]) })
		}
	}
	golden(t, "messages.no-catalogue.txt", out.String())
}

// runInitSuggestion runs a pin init command line as a no-catalogue message
// gives it, in a fresh folder holding what it reads, and checks the
// catalogue it writes loads and has a module.
func runInitSuggestion(t *testing.T, msg, line string) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	os.MkdirAll(filepath.Join(dir, "ops"), 0o755)
	args := shellFields(t, line)[1:]
	path := catalogue.DefaultPath
	for i, a := range args {
		if a == "--catalogue" {
			path = args[i+1]
		}
	}
	want := "Wrote 1 module(s)"
	switch {
	case strings.Contains(line, "--compose compose.yaml"):
		writeFile(t, filepath.Join(dir, "compose.yaml"), "services:\n  web:\n    image: registry.example.org/stack/web:1.2.3\n")
	case strings.Contains(line, "--manifests DIR"):
		for i, a := range args {
			if a == "DIR" {
				args[i] = "k8s"
			}
		}
		writeFiles(t, dir, map[string]string{"k8s/web.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\nspec:\n  containers: [{name: web, image: registry.example.org/stack/web:1.2.3}]\n"})
	case strings.Contains(line, "--from-host local"):
		t.Setenv("DOCKER_HOST", testenv.DockerHost(t))
		host := regexp.MustCompile(`holds (host "local" \{\})`).FindStringSubmatch(msg)
		if host == nil {
			t.Fatalf("no host line to write in:\n%s", msg)
		}
		file := filepath.Join(dir, path)
		if fi, err := os.Stat(file); err == nil && fi.IsDir() {
			file = filepath.Join(file, "init.hcl")
		}
		writeFile(t, file, host[1]+"\n")
		want = "" // whatever the test Engine runs: it may be nothing
	default:
		t.Fatalf("a command line the test does not know: %s", line)
	}
	r := pin(t, dir, args...)
	if r.code != exitOK || !strings.Contains(r.stdout, want) {
		t.Fatalf("pin %s: exit %d\n%s%s", strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	if _, diags := catalogue.Load(filepath.Join(dir, path)); diags.HasErrors() {
		t.Errorf("the catalogue pin init wrote does not load: %v", diags)
	}
}

// shellFields splits a command line as a POSIX shell does words of plain
// characters and single quotes.
func shellFields(t *testing.T, line string) []string {
	var out []string
	var w strings.Builder
	inWord, quoted := false, false
	for _, r := range line {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("an open quote in %q", line)
	}
	if inWord {
		out = append(out, w.String())
	}
	return out
}

// TestMissingImageShowsAValue: a module without image (or policy) is an
// HCL diagnostic at the module's file:line:column whose detail shows a
// value to write. The messages are golden (text and JSON: diagnostics are
// text on stderr). Then the values shown are written into the modules as
// given, and the catalogue loads: pin no longer stops at it.
func TestMissingImageShowsAValue(t *testing.T) {
	dir := t.TempDir()
	cat := `module "app" {
  policy = "track-upstream"
}

module "db" {
  image = "registry.example.org/team/db"
  pin   = "16.4"
}
`
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	var out strings.Builder
	var stderr string
	for _, args := range [][]string{{"resolve"}, {"resolve", "--format", "json"}} {
		r := pin(t, dir, args...)
		fmt.Fprintf(&out, "$ pin %s\nexit %d\n%s%s\n", strings.Join(args, " "), r.code, r.stdout, r.stderr)
		if r.code != exitInput {
			t.Errorf("pin %s: exit %d, want %d", strings.Join(args, " "), r.code, exitInput)
		}
		stderr = r.stderr
	}
	golden(t, "messages.missing-image.txt", out.String())
	for _, want := range []string{"catalogue.hcl:1:1: error: Missing image", "catalogue.hcl:5:1: error: Missing policy"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("no %q in\n%s", want, stderr)
		}
	}

	image := regexp.MustCompile(`such as (image = "[^"]+")`).FindStringSubmatch(stderr)
	policy := regexp.MustCompile(`Write (policy = "[^"]+")`).FindStringSubmatch(stderr)
	if image == nil || policy == nil {
		t.Fatalf("no value shown to write:\n%s", stderr)
	}
	cat = strings.Replace(cat, "module \"app\" {\n", "module \"app\" {\n  "+image[1]+"\n", 1)
	cat = strings.Replace(cat, "module \"db\" {\n", "module \"db\" {\n  "+policy[1]+"\n", 1)
	writeFile(t, filepath.Join(dir, "catalogue.hcl"), cat)
	if _, diags := catalogue.Load(filepath.Join(dir, "catalogue.hcl")); len(diags) > 0 {
		t.Fatalf("with the values shown written in:\n%s\n%v", cat, diags)
	}
	// Nothing runs them and nothing is pinned: pin now refuses for that,
	// not for the catalogue.
	if r := pin(t, dir, "resolve", "--offline"); r.code == exitInput || strings.Contains(r.stderr, "Missing") {
		t.Errorf("with the values shown written in: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
