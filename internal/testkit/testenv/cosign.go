package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// EnvCosign names the real cosign CLI (v2.6.5, built from the Go module
// proxy by scripts/cosign and cached outside the repository) that
// scripts/test exports for the signature tests.
const EnvCosign = "PIN_TEST_COSIGN"

// CosignCLI is the real cosign CLI with a key pair it made itself
// (cosign generate-key-pair), for signing images on the test registries
// as a user would. It runs offline: no transparency log (--tlog-upload=false)
// and no Fulcio, so keyless signing cannot be done with it here.
type CosignCLI struct {
	// Bin is the binary; Key and Pub are the key pair's files
	// (cosign.key, encrypted with a password of the test's, and
	// cosign.pub).
	Bin, Key, Pub string
	dir, password string
}

// Cosign returns the cosign CLI with a new key pair. It skips the test
// when scripts/test did not build cosign, or fails it under CI.
func Cosign(t testing.TB) *CosignCLI {
	t.Helper()
	bin := lookup(t, "cosign CLI", runHint, EnvCosign)
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		unavailable(t, "cosign CLI", runHint, "%s=%s is not an executable: %v", EnvCosign, bin, err)
	}
	c := &CosignCLI{Bin: bin, dir: t.TempDir(), password: "pin-test-" + filepath.Base(t.TempDir())}
	c.run(t, c.dir, "generate-key-pair")
	c.Key, c.Pub = filepath.Join(c.dir, "cosign.key"), filepath.Join(c.dir, "cosign.pub")
	return c
}

// OtherKey returns the CLI with another key pair of its own.
func (c *CosignCLI) OtherKey(t testing.TB) *CosignCLI {
	t.Helper()
	o := &CosignCLI{Bin: c.Bin, dir: t.TempDir(), password: c.password + "-other"}
	o.run(t, o.dir, "generate-key-pair")
	o.Key, o.Pub = filepath.Join(o.dir, "cosign.key"), filepath.Join(o.dir, "cosign.pub")
	return o
}

// Sign signs ref (repository@digest, on a loopback registry over plain
// http) with the key, as "cosign sign --key cosign.key" does, plus extra
// flags: none for the tag scheme (the "sha256-<hex>.sig" tag),
// "--registry-referrers-mode=oci-1-1" for the classic signature as an OCI
// 1.1 referrer, "--new-bundle-format" for a Sigstore bundle as a
// referrer. It returns cosign's output.
func (c *CosignCLI) Sign(t testing.TB, ref string, extra ...string) string {
	t.Helper()
	args := append([]string{"sign", "--key", c.Key, "--tlog-upload=false", "--yes",
		"--allow-insecure-registry", "--allow-http-registry"}, extra...)
	return c.run(t, c.dir, append(args, ref)...)
}

// Verify runs "cosign verify --key cosign.pub" on ref (offline: no
// transparency log), plus extra flags (--experimental-oci11 to read a
// classic signature attached as a referrer), and returns its output and
// whether cosign accepted the image.
func (c *CosignCLI) Verify(t testing.TB, ref string, extra ...string) (string, bool) {
	t.Helper()
	args := append([]string{"verify", "--key", c.Pub, "--insecure-ignore-tlog",
		"--allow-insecure-registry", "--allow-http-registry"}, extra...)
	out, err := c.command(c.dir, append(args, ref)...).CombinedOutput()
	return string(out), err == nil
}

func (c *CosignCLI) run(t testing.TB, dir string, args ...string) string {
	t.Helper()
	out, err := c.command(dir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("cosign %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// command is cosign with args in dir: its password in the environment,
// its home in dir (it writes nothing of the user's), the OCI 1.1 mode
// allowed (COSIGN_EXPERIMENTAL), and no TUF root fetched.
func (c *CosignCLI) command(dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(c.Bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "COSIGN_PASSWORD="+c.password, "COSIGN_EXPERIMENTAL=1", "HOME="+dir,
		"TUF_ROOT="+filepath.Join(dir, ".sigstore"), "SIGSTORE_NO_CACHE=1")
	cmd.Stdin = bytes.NewReader(nil)
	return cmd
}
