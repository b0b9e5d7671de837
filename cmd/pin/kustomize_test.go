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
// module (internal/tools/kustomize) so that pin's go.mod stays lean.
func kustomizeRender(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		if os.Getenv("CI") != "" {
			t.Fatal("the kustomize check runs in CI: do not pass -short there")
		}
		t.Skip("builds kustomize: not in -short")
	}
	bin := filepath.Join(t.TempDir(), "kustomize")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join(repoRoot, "internal/tools/kustomize")
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=readonly")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building kustomize: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize %s: %v\n%s", dir, err, out)
	}
	return string(out)
}

// TestKustomizeRendersTheLock: the images: entries pin export writes make
// kustomize render every container, init containers included, at exactly
// the locked reference, and leave other images alone.
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
		"k8s/kustomization.yaml": "# forge\nresources:\n- forge.yaml\nnamespace: forge\n",
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
	out := kustomizeRender(t, filepath.Join(dir, "k8s"))
	want := "image: registry.example.org/forge/forgejo:1.27.3@" + digForge
	if n := strings.Count(out, want); n != 2 {
		t.Errorf("rendered %d containers at %s, want 2 (init container and container):\n%s", n, want, out)
	}
	if !strings.Contains(out, "image: postgres:16") {
		t.Errorf("an image no module covers changed:\n%s", out)
	}
}
