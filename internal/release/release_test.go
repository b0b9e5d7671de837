package release

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

var repoRoot, _ = filepath.Abs("../..")

// files lists the image's one layer: path → header.
func files(t *testing.T, img v1.Image) map[string]*tar.Header {
	t.Helper()
	layers, err := img.Layers()
	if err != nil || len(layers) != 1 {
		t.Fatalf("layers: %d, %v; want one", len(layers), err)
	}
	rc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = h
	}
}

// TestImageShape: non-root, pin as the entrypoint, the OCI labels, and the
// same inputs give the same digest (a changed input, another).
func TestImageShape(t *testing.T) {
	o := Options{Version: "v0.3.0", Revision: "d34efb305674747d5fb16a7e2b5a8a09597f7723", Created: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	img, err := Image([]byte("#!binary"), o)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := img.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	c := cf.Config
	if c.User != "65532:65532" || strings.Join(c.Entrypoint, " ") != BinaryPath || c.WorkingDir != "/work" || cf.OS != "linux" || cf.Architecture != "amd64" {
		t.Errorf("config: user %q, entrypoint %q, workdir %q, %s/%s", c.User, c.Entrypoint, c.WorkingDir, cf.OS, cf.Architecture)
	}
	for k, v := range map[string]string{
		"org.opencontainers.image.title":    "pin",
		"org.opencontainers.image.version":  "v0.3.0",
		"org.opencontainers.image.revision": o.Revision,
		"org.opencontainers.image.licenses": "Apache-2.0",
		"org.opencontainers.image.source":   DefaultSource,
		"org.opencontainers.image.created":  "2026-12-01T00:00:00Z",
	} {
		if c.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, c.Labels[k], v)
		}
	}
	fs := files(t, img)
	if h := fs["usr/local/bin/pin"]; h == nil || h.Mode != 0o755 || h.Size != int64(len("#!binary")) {
		t.Errorf("binary: %+v", h)
	}
	for _, d := range []string{"work/", "home/pin/"} {
		if h := fs[d]; h == nil || h.Uid != UID || h.Gid != GID {
			t.Errorf("%s is not the pin user's: %+v", d, h)
		}
	}
	// Any user the image is run as (docker run --user) may write its home.
	if h := fs["home/pin/"]; h == nil || h.Mode != 0o1777 {
		t.Errorf("home/pin/ mode %o, want 1777", h.Mode)
	}
	if !slices.Contains(c.Env, EnvContainerImage+"=1") {
		t.Errorf("env %q lacks %s=1", c.Env, EnvContainerImage)
	}
	if h := fs["etc/passwd"]; h == nil {
		t.Error("no /etc/passwd")
	}
	d1, _ := img.Digest()
	again, _ := Image([]byte("#!binary"), o)
	d2, _ := again.Digest()
	o.Revision = "0000000000000000000000000000000000000000"
	other, _ := Image([]byte("#!binary"), o)
	d3, _ := other.Digest()
	if d1 != d2 || d1 == d3 {
		t.Errorf("digests %s, %s (same inputs) and %s (another revision)", d1, d2, d3)
	}
	mt, _ := img.MediaType()
	if mt != "application/vnd.oci.image.manifest.v1+json" {
		t.Errorf("manifest media type %s", mt)
	}
}

// TestImageRunsIncident builds the real image (a static binary), pushes it
// to the test registry and runs it on the test Docker Engine against the
// repository's incident, the examples mounted read-only: it prints the
// plan the in-process CLI test holds as a golden file.
func TestImageRunsIncident(t *testing.T) {
	if testing.Short() {
		t.Skip("builds pin and runs a container")
	}
	reg := testenv.Registry(t)
	dh := testenv.DockerHost(t)
	if _, err := exec.LookPath("docker"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker CLI required in CI")
		}
		t.Skip("docker CLI not installed")
	}
	ctx := context.Background()
	o := Options{Version: "v0.0.0-test", Revision: "test"}
	bin, err := BuildBinary(ctx, repoRoot, o)
	if err != nil {
		t.Fatal(err)
	}
	// Static: no program interpreter, no shared libraries.
	ef, err := elf.NewFile(bytes.NewReader(bin))
	if err != nil {
		t.Fatal(err)
	}
	libs, _ := ef.ImportedLibraries()
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a program interpreter: it is not static")
		}
	}
	if len(libs) > 0 {
		t.Errorf("the binary links %v", libs)
	}
	img, err := Image(bin, o)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(fmt.Sprintf("%s/release/pin:%d", reg, time.Now().UnixNano()), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	digest, _ := img.Digest()
	pinned := ref.Context().Name() + "@" + digest.String()

	docker := func(args ...string) (string, error) {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command("docker", append([]string{"-H", dh}, args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		if err != nil {
			err = fmt.Errorf("docker %s: %w\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String(), err
	}
	if _, err := docker("pull", "-q", pinned); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { docker("rmi", "-f", pinned) })
	if user, err := docker("image", "inspect", "-f", "{{.Config.User}}", pinned); err != nil || strings.TrimSpace(user) != "65532:65532" {
		t.Errorf("the engine sees user %q (%v)", user, err)
	}
	// The working folder, as a user's checkout is: theirs (uid 1000),
	// 0755, the catalogue in it; the examples it names, read-only.
	work := t.TempDir()
	cat, err := os.ReadFile(filepath.Join(repoRoot, "catalogue.hcl"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "catalogue.hcl"), cat, 0o644); err != nil {
		t.Fatal(err)
	}
	const owner = 1000
	if err := os.Chown(work, owner, owner); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(work, 0o755); err != nil {
		t.Fatal(err)
	}
	as := func(user string, args ...string) (string, error) {
		base := []string{"run", "--rm", "--network", "none",
			"-v", work + ":/work",
			"-v", filepath.Join(repoRoot, "examples") + ":/work/examples:ro"}
		if user != "" {
			base = append(base, "--user", user)
		}
		return docker(append(append(base, pinned), args...)...)
	}
	// As the image's own user, the lock cannot be written: pin says so,
	// and how to run the image (exit 2, nothing written).
	_, err = as("", "resolve")
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 2 {
		t.Fatalf("resolve as uid %d in a folder of uid %d: %v, want exit 2", UID, owner, err)
	}
	msg := regexp.MustCompile(`\.pin\.lock\.hcl[0-9]+`).ReplaceAllString(err.Error()[strings.Index(err.Error(), "\n")+1:], ".pin.lock.hclNNN")
	golden(t, "permission.golden", msg)
	fix := regexp.MustCompile(`docker run (--user [0-9]+:[0-9]+) …`).FindStringSubmatch(msg)
	if fix == nil {
		t.Fatalf("no docker run --user in:\n%s", msg)
	}
	if _, err := os.Stat(filepath.Join(work, "pin.lock.hcl")); !os.IsNotExist(err) {
		t.Errorf("a refused run wrote the lock: %v", err)
	}
	// What it says to run.
	run := func(args ...string) (string, error) { return as(strings.TrimPrefix(fix[1], "--user "), args...) }
	out, err := run("resolve")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(repoRoot, "cmd/pin/testdata/incident.plan.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if out != string(want) {
		t.Errorf("pin resolve in the image printed\n%s\nwant (cmd/pin/testdata/incident.plan.txt)\n%s", out, want)
	}
	lock, err := os.ReadFile(filepath.Join(work, "pin.lock.hcl"))
	wantLock, _ := os.ReadFile(filepath.Join(repoRoot, "cmd/pin/testdata/incident.lock.hcl"))
	if err != nil || string(lock) != string(wantLock) {
		t.Errorf("the lock the image wrote (%v) is not cmd/pin/testdata/incident.lock.hcl:\n%s", err, lock)
	}
	// --check writes nothing: the image's own user may run it.
	if out, err := as("", "resolve", "--check"); err != nil || !strings.Contains(out, "Plan: 3 unchanged.") {
		t.Errorf("resolve --check in the image, as its user, after resolve: %v\n%s", err, out)
	}
	if v, err := run("version"); err != nil || !strings.HasPrefix(v, "pin ") {
		t.Errorf("pin version in the image: %q, %v", v, err)
	}
}

var update = flag.Bool("update", false, "rewrite golden files")

func golden(t *testing.T, name, got string) {
	t.Helper()
	p := filepath.Join("testdata", name)
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(p, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if got != string(want) {
		t.Errorf("%s differs (go test -run %s -update rewrites it); got:\n%s", p, t.Name(), got)
	}
}
