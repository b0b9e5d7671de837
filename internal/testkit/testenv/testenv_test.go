package testenv_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/remote/transport"

	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// docker runs the docker CLI against the test engine and returns its
// trimmed stdout.
func docker(t *testing.T, host string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "docker", append([]string{"-H", host}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("docker %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimSpace(string(out))
}

// TestEngineRunsPushedImage checks the whole chain other tests rely on: an
// image built by testimage, pushed to the plain registry, pulled and run by
// the real engine, with the IDs the engine reports.
func TestEngineRunsPushedImage(t *testing.T) {
	reg := testenv.Registry(t)
	host := testenv.DockerHost(t)
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatalf("docker CLI not found: %v", err)
	}

	img := testimage.Build(t, testimage.Options{
		Layer:      testimage.Sleeper(t),
		Entrypoint: []string{testimage.SleeperPath},
		Created:    time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		Labels:     map[string]string{"org.pin-tool.test": t.Name()},
	})
	ref := reg + "/testenv/sleeper:v1"
	dig := testimage.Push(t, ref, img)

	// The same options must give the same image.
	again := testimage.Build(t, testimage.Options{
		Layer:      testimage.Sleeper(t),
		Entrypoint: []string{testimage.SleeperPath},
		Created:    time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
		Labels:     map[string]string{"org.pin-tool.test": t.Name()},
	})
	if d, _ := again.Digest(); d.String() != dig.DigestStr() {
		t.Errorf("rebuilt image digest %s, want %s", d, dig.DigestStr())
	}

	docker(t, host, "pull", ref)
	ctr := fmt.Sprintf("pin-testenv-%d-%d", os.Getpid(), time.Now().UnixNano())
	t.Cleanup(func() {
		// Best effort: the engine goes away with the test run anyway.
		exec.Command("docker", "-H", host, "rm", "-f", ctr).Run()
	})
	docker(t, host, "run", "-d", "--network", "none", "--name", ctr, ref)

	if got := docker(t, host, "inspect", "-f", "{{.State.Running}}", ctr); got != "true" {
		logs, _ := exec.Command("docker", "-H", host, "logs", ctr).CombinedOutput()
		t.Fatalf("container running = %q, want true; logs:\n%s", got, logs)
	}

	cfg, err := img.ConfigName()
	if err != nil {
		t.Fatal(err)
	}
	if id := docker(t, host, "image", "inspect", "-f", "{{.Id}}", ref); id != cfg.String() {
		t.Errorf("image Id = %s, want config digest %s", id, cfg)
	}
	repoDigests := strings.Fields(docker(t, host, "image", "inspect", "-f", `{{join .RepoDigests " "}}`, ref))
	if !slices.Contains(repoDigests, dig.String()) {
		t.Errorf("RepoDigests = %v, want to contain %s", repoDigests, dig)
	}

	// The sleeper must stop promptly on SIGTERM (docker stop's default wait
	// is 10s before SIGKILL).
	start := time.Now()
	docker(t, host, "stop", ctr)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("docker stop took %v: sleeper ignores SIGTERM?", d)
	}
}

// TestAuthRegistry checks that the auth registry refuses anonymous access
// and accepts the credentials from the environment.
func TestAuthRegistry(t *testing.T) {
	addr, user, password := testenv.AuthRegistry(t)
	auth := authn.FromConfig(authn.AuthConfig{Username: user, Password: password})

	img := testimage.Build(t, testimage.Options{Content: "auth"})
	dig := testimage.Push(t, addr+"/testenv/auth:v1", img, auth)

	ref, err := name.ParseReference(addr+"/testenv/auth:v1", name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	_, err = remote.Head(ref)
	var terr *transport.Error
	if !errors.As(err, &terr) || terr.StatusCode != http.StatusUnauthorized {
		t.Errorf("anonymous HEAD: err = %v, want a 401 transport error", err)
	}
	desc, err := remote.Head(ref, remote.WithAuth(auth))
	if err != nil {
		t.Fatalf("authenticated HEAD: %v", err)
	}
	if desc.Digest.String() != dig.DigestStr() {
		t.Errorf("HEAD digest = %s, want %s", desc.Digest, dig.DigestStr())
	}
}

// TestIndex pushes a two-platform index and reads it back.
func TestIndex(t *testing.T) {
	reg := testenv.Registry(t)
	amd := testimage.Platform{OS: "linux", Architecture: "amd64"}
	arm := testimage.Platform{OS: "linux", Architecture: "arm64", Variant: "v8"}
	idx := testimage.Index(t, map[testimage.Platform]v1.Image{
		amd: testimage.Build(t, testimage.Options{Content: "amd", Platform: amd}),
		arm: testimage.Build(t, testimage.Options{Content: "arm", Platform: arm}),
	})
	dig := testimage.Push(t, reg+"/testenv/multi:v1", idx)

	got, err := remote.Index(dig)
	if err != nil {
		t.Fatalf("read index: %v", err)
	}
	m, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var plats []string
	for _, d := range m.Manifests {
		plats = append(plats, d.Platform.String())
	}
	if want := []string{"linux/amd64", "linux/arm64/v8"}; !slices.Equal(plats, want) {
		t.Errorf("index platforms = %v, want %v", plats, want)
	}
}
