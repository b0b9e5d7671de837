package testenv

import (
	"os"
	"os/exec"
	"testing"
)

// EnvHelm names the real helm CLI (v4.3.2, built from the Go module proxy
// by scripts/helm and cached outside the repository) that scripts/test
// exports for the Helm values tests.
const EnvHelm = "PIN_TEST_HELM"

// Helm returns the path of the real helm CLI. It skips the test when
// scripts/test did not build helm, or fails it under CI.
func Helm(t testing.TB) string {
	t.Helper()
	bin := lookup(t, "helm CLI", runHint, EnvHelm)
	if fi, err := os.Stat(bin); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		unavailable(t, "helm CLI", runHint, "%s=%s is not an executable: %v", EnvHelm, bin, err)
	}
	return bin
}

// HelmRun runs the helm CLI bin with args in dir, with its caches and
// configuration in temporary folders of the test (never the user's), and
// returns its standard output; a failure fails the test with what helm
// said.
func HelmRun(t testing.TB, bin, dir string, args ...string) string {
	t.Helper()
	home := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+home+"/cache", "HELM_CONFIG_HOME="+home+"/config", "HELM_DATA_HOME="+home+"/data")
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("helm %v: %v\n%s", args, err, msg)
	}
	return string(out)
}
