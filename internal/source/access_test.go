package source

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/pin-tool/pin/internal/catalogue"
	"github.com/pin-tool/pin/internal/registry"
	"github.com/pin-tool/pin/internal/testkit/testenv"
	"github.com/pin-tool/pin/internal/testkit/testimage"
)

// TestAccessFromCatalogue: each way in that a catalogue can name reaches
// the real servers of scripts/test through the wiring of this package: a
// tcp+TLS engine (cert_path, tls_verify), the same engine over ssh and
// through a Docker context, Podman's socket, and a registry requiring a
// client certificate (ca_file, client_cert, client_key), with Options'
// certs.d root honoured.
func TestAccessFromCatalogue(t *testing.T) {
	tlsAddr, certs := testenv.DockerTLSHost(t)
	sshAddr, _ := testenv.SSHHost(t)
	podman := testenv.PodmanHost(t)
	reg, _ := testenv.MTLSRegistry(t)
	digest := pushTLS(t, reg, certs, "source/app:1.0.0")

	// A Docker config with a context "prod" for the TLS engine, as
	// `docker context create prod --docker host=…,ca=…,cert=…,key=…`.
	cfg := t.TempDir()
	t.Setenv("DOCKER_CONFIG", cfg)
	if out, err := dockerContextCreate(cfg, tlsAddr, certs); err != nil {
		t.Fatalf("docker context create: %v\n%s", err, out)
	}

	dir := t.TempDir()
	cat := fmt.Sprintf(`
host "tls" {
  docker     = %q
  cert_path  = %q
  tls_verify = true
}
host "ssh" {
  docker = %q
}
host "prod" {
  context = "prod"
}
host "podman" {
  docker = %q
}
registry %q {
  ca_file     = %q
  client_cert = %q
  client_key  = %q
}
module "app" {
  image  = "%s/source/app"
  policy = "exact"
  pin    = "1.0.0"
}
`, tlsAddr, certs, sshAddr, podman, reg, filepath.Join(certs, "ca.pem"), filepath.Join(certs, "cert.pem"), filepath.Join(certs, "key.pem"), reg)
	if err := os.WriteFile(filepath.Join(dir, "pin.hcl"), []byte(cat), 0o644); err != nil {
		t.Fatal(err)
	}
	c, diags := catalogue.Load(dir)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	o := Options{CacheDir: t.TempDir(), CertsDir: t.TempDir()}
	hosts, err := Hosts(c, o, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"tls", "ssh", "prod", "podman"} {
		snap, err := hosts[name].Observe(context.Background())
		if err != nil {
			t.Errorf("host %s: %v", name, err)
			continue
		}
		if snap.Host != name {
			t.Errorf("host %s: snapshot of %q", name, snap.Host)
		}
	}

	img, err := NewRegistries(c, o).For(reg+"/source/app").Image(context.Background(), reg+"/source/app", "1.0.0", "")
	if err != nil {
		t.Fatalf("registry with client_cert: %v", err)
	}
	if img.Digest != digest {
		t.Errorf("digest %s, want %s", img.Digest, digest)
	}

	// Without the block, the certs.d root of Options is read: empty, so
	// the registry's CA is unknown.
	c.Registries = nil
	_, err = NewRegistries(c, o).For(reg+"/source/app").Tags(context.Background(), reg+"/source/app")
	var te *registry.TLSError
	if !errors.As(err, &te) || te.Kind != registry.TLSUnknownCA {
		t.Errorf("registry without its block: error %v, want an unknown CA", err)
	}
	// With the CA and client certificate in certs.d, as the Engine reads it.
	testenv.WriteFiles(t, filepath.Join(o.CertsDir, reg), map[string][]byte{
		"ca.crt":      testenv.ReadFile(t, certs, "ca.pem"),
		"client.cert": testenv.ReadFile(t, certs, "cert.pem"),
		"client.key":  testenv.ReadFile(t, certs, "key.pem"),
	})
	if _, err := NewRegistries(c, o).For(reg+"/source/app").Tags(context.Background(), reg+"/source/app"); err != nil {
		t.Errorf("registry through certs.d: %v", err)
	}
}

// dockerContextCreate makes the context "prod" with the Docker CLI itself,
// so that pin is shown to read what the CLI writes.
func dockerContextCreate(cfg, addr, certs string) ([]byte, error) {
	spec := fmt.Sprintf("host=%s,ca=%s,cert=%s,key=%s", addr,
		filepath.Join(certs, "ca.pem"), filepath.Join(certs, "cert.pem"), filepath.Join(certs, "key.pem"))
	cmd := exec.Command("docker", "--config", cfg, "context", "create", "prod", "--docker", spec)
	return cmd.CombinedOutput()
}

// pushTLS pushes a small image to ref (under addr) over TLS with the
// client certificate of certs, and returns its digest.
func pushTLS(t *testing.T, addr, certs, ref string) string {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(testenv.ReadFile(t, certs, "ca.pem"))
	pair, err := tls.LoadX509KeyPair(filepath.Join(certs, "cert.pem"), filepath.Join(certs, "key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	tr := remote.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{pair}}
	img := testimage.Build(t, testimage.Options{Labels: map[string]string{"org.pin-tool.test": t.Name()}})
	tag, err := name.NewTag(addr + "/" + ref)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(tag, img, remote.WithTransport(tr)); err != nil {
		t.Fatalf("pushing %s: %v", tag, err)
	}
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d.String()
}
