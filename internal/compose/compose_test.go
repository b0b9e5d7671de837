package compose

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/sirupsen/logrus"
)

func write(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func summary(ss []Service) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name+" "+s.Image+" "+s.Ref.Where())
	}
	return out
}

func TestLoadMergesInterpolatesAndAppliesProfiles(t *testing.T) {
	dir := "testdata/stack"
	base, over := filepath.Join(dir, "compose.yaml"), filepath.Join(dir, "override.yaml")
	ctx := context.Background()

	p, err := Load(ctx, Options{Files: []string{base}, Env: []string{}, Profiles: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "stack" {
		t.Errorf("project name %q, want the folder's, stack", p.Name)
	}
	// .env sets WEB_TAG; REGISTRY falls back to its default.
	want := []string{"builder  :0", "web registry.example.org/pin/web:1.3 testdata/stack/compose.yaml:4"}
	if d := cmp.Diff(want, summary(p.Services)); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"worker registry.example.org/pin/worker:latest testdata/stack/compose.yaml:7"}, summary(p.Disabled)); d != "" {
		t.Errorf("disabled (-want +got):\n%s", d)
	}
	if !p.Services[0].Build {
		t.Error("builder has a build section")
	}

	// The environment beats .env; a later file overrides; a profile enables.
	p, err = Load(ctx, Options{Files: []string{base, over}, Env: []string{"WEB_TAG=2.0"}, Profiles: []string{"batch"}, ProjectName: "forge"})
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"builder  :0", "web registry.example.org/pin/web:2.0 testdata/stack/override.yaml:3", "worker registry.example.org/pin/worker:latest testdata/stack/compose.yaml:7"}
	if d := cmp.Diff(want, summary(p.Services)); d != "" {
		t.Errorf("services (-want +got):\n%s", d)
	}
	if p.Name != "forge" {
		t.Errorf("project name %q, want forge", p.Name)
	}
}

func TestLoadBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, text, want string }{
		{"syntax", "services:\n  web:\n    image: [x\n", "compose.yaml:3"},
		{"unset variable", "services:\n  web:\n    network_mode: none\n    image: reg.example/web:${NOPE}\n", "compose.yaml:4: bad compose file: variable NOPE has no value and no default"},
		{"bad reference", "services:\n  web:\n    image: reg.example/Web:1.0\n", "compose.yaml:3: bad compose file: service web: image \"reg.example/Web:1.0\" is not a valid reference"},
		{"not compose", "services: 3\n", "bad compose file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := write(t, dir, "compose.yaml", tc.text)
			_, err := Load(context.Background(), Options{Files: []string{f}, Env: []string{}})
			if err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestLoadCollectsWarnings: what compose-go warns about (through logrus's
// global logger) comes back in Project.Warnings instead of being printed,
// the logger is left as it was, and a file with nothing to warn about
// gives no warning.
func TestLoadCollectsWarnings(t *testing.T) {
	dir := t.TempDir()
	old := write(t, dir, "compose.yaml", "version: \"3.8\"\nservices:\n  web:\n    image: nginx:1.27\n")
	l := logrus.StandardLogger()
	var printed bytes.Buffer
	out := l.Out
	l.SetOutput(&printed)
	defer l.SetOutput(out)
	hooks := len(l.Hooks[logrus.WarnLevel])

	p, err := Load(context.Background(), Options{Files: []string{old}, Env: []string{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Warnings) != 1 || !strings.Contains(p.Warnings[0], "the attribute `version` is obsolete") || !strings.Contains(p.Warnings[0], old) {
		t.Errorf("warnings = %q, want the obsolete version attribute of %s", p.Warnings, old)
	}
	if printed.Len() != 0 {
		t.Errorf("compose-go printed through logrus: %s", printed.String())
	}
	if l.Out != &printed || len(l.Hooks[logrus.WarnLevel]) != hooks {
		t.Error("the logger was not left as it was")
	}

	plain := write(t, dir, "plain.yaml", "services:\n  web:\n    image: nginx:1.27\n")
	if p, err := Load(context.Background(), Options{Files: []string{plain}, Env: []string{}}); err != nil || len(p.Warnings) != 0 {
		t.Errorf("nothing to warn about: warnings %q, err %v", p.Warnings, err)
	}
}
