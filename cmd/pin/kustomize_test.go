package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pin-tool/pin/lock"
)

// kustomizeRender renders dir with kustomize's Go API, built from its own
// module (internal/devtools/kustomize) so that pin's go.mod stays lean.
func kustomizeRender(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("the kustomize check runs in CI: do not pass -short there")
		}
		t.Skip("builds kustomize: not in -short")
	}
	bin := filepath.Join(t.TempDir(), "kustomize")
	build := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	build.Dir = filepath.Join(repoRoot, "internal/devtools/kustomize")
	// CGO_ENABLED=0 and -trimpath: the suite's configuration, in which
	// the standard library is compiled already (scripts/test,
	// like_release).
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kustomize: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

// kustomization has an images: list that a person started, with comments
// pin export keeps: an entry for forge, written before the lock, and one
// held back by hand.
const kustomization = `# forge
resources:
- forge.yaml
namespace: forge
images: # forge by pin export, postgres by hand
# forge, from the lock
- name: registry.example.org/forge/forgejo
  newTag: "1.22.6" # was the pin
- name: postgres # held back
  newTag: "16"
`

// TestKustomizeRendersTheLock: the images: entries pin export writes make
// kustomize render every container, init containers included, at exactly
// the locked reference, and leave other images alone; the list's comments
// stay.
func TestKustomizeRendersTheLock(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"k8s/forge.yaml": manifests + `---
apiVersion: batch/v1
kind: CronJob
metadata: {name: backup}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers:
          - {name: dump, image: "postgres:16"}
`,
		"k8s/kustomization.yaml": kustomization,
		"catalogue.hcl": `module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  pin    = "1.27"
}
`,
	})
	lk := &lock.Lock{Modules: []*lock.Module{{Name: "forge", Policy: "at-least-running", Image: "registry.example.org/forge/forgejo", Tag: "1.27.3", Digest: digForge, Source: "pin", Reason: "test"}}}
	os.WriteFile(filepath.Join(dir, "pin.lock.hcl"), lock.Format(lk), 0o644)
	if r := pin(t, dir, "export", "--kustomize", "k8s"); r.code != 0 {
		t.Fatalf("export --kustomize: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "k8s", "kustomization.yaml"))
	want := strings.Replace(kustomization, `- name: registry.example.org/forge/forgejo
  newTag: "1.22.6" # was the pin
`, `- name: registry.example.org/forge/forgejo
  newTag: "1.27.3" # was the pin
  newName: registry.example.org/forge/forgejo
  digest: `+digForge+`
`, 1)
	if string(got) != want {
		t.Errorf("kustomization.yaml:\n%s\nwant:\n%s", got, want)
	}
	out := kustomizeRender(t, filepath.Join(dir, "k8s"))
	want = "image: registry.example.org/forge/forgejo:1.27.3@" + digForge
	if n := strings.Count(out, want); n != 2 {
		t.Errorf("rendered %d containers at %s, want 2 (init container and container):\n%s", n, want, out)
	}
	if !strings.Contains(out, "image: postgres:16") {
		t.Errorf("an image no module covers changed:\n%s", out)
	}
}
