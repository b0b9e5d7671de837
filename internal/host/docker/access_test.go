package docker

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dcontext "github.com/docker/cli/cli/context"
	"github.com/docker/cli/cli/context/store"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// The ways of reaching an engine other than its unix socket, each against
// the real engine of scripts/test: over tcp with --tlsverify, over ssh,
// and through Docker CLI contexts. Each reads a container made for the
// test through the unix socket: the oracle is the engine's own answer there.

// marker makes a created container on the test engine and returns its
// name and image ID, which every way in must observe.
func marker(t *testing.T) (name, imageID string) {
	t.Helper()
	cli, _ := engine(t)
	id := unique(t)
	img := sleeper(t, time.Time{}, map[string]string{"org.pin-tool.test": id})
	ref := "pin.test/access/" + id + ":v1"
	load(t, cli, ref, img)
	run(t, cli, id, ref, nil, false)
	return id, configDigest(t, img)
}

// observes checks that h reaches the engine and sees the marker.
func observes(t *testing.T, h Host, name, imageID string) {
	t.Helper()
	snap, err := h.Observe(context.Background())
	if err != nil {
		t.Fatalf("Observe %s: %v", h.Name, err)
	}
	c, ok := findContainer(snap, name)
	if !ok {
		t.Fatalf("Observe %s: container %s not observed", h.Name, name)
	}
	if c.ImageID != imageID {
		t.Errorf("Observe %s: container %s has image %s, want %s", h.Name, name, c.ImageID, imageID)
	}
	if _, ok := snap.Image(imageID); !ok {
		t.Errorf("Observe %s: image %s not observed", h.Name, imageID)
	}
}

// refuses checks that h fails with an AccessError of kind, whose message
// names the host and the endpoint.
func refuses(t *testing.T, h Host, kind AccessKind, names string) error {
	t.Helper()
	_, err := h.Observe(context.Background())
	var ae *AccessError
	if !errors.As(err, &ae) || ae.Kind != kind {
		t.Fatalf("Observe %s: error %v, want an AccessError of kind %d", h.Name, err, kind)
	}
	if want := "host " + h.Name + " ("; !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), names) {
		t.Errorf("Observe %s: error %q does not start with %q and name %s", h.Name, err, want, names)
	}
	t.Logf("%s: %v", h.Name, err)
	return err
}

// certDir writes a DOCKER_CERT_PATH folder: ca.pem, and cert.pem and
// key.pem when cert is set.
func certDir(t *testing.T, ca, cert, key []byte) string {
	dir := t.TempDir()
	files := map[string][]byte{"ca.pem": ca}
	if cert != nil {
		files["cert.pem"], files["key.pem"] = cert, key
	}
	testenv.WriteFiles(t, dir, files)
	return dir
}

func TestObserveTLSEngine(t *testing.T) {
	addr, dir := testenv.DockerTLSHost(t)
	name, imageID := marker(t)
	ca := testenv.LoadCA(t, dir)
	caPEM := testenv.ReadFile(t, dir, "ca.pem")
	now := time.Now()

	t.Run("cert_path and tls_verify", func(t *testing.T) {
		observes(t, Host{Name: "tls", Addr: addr, CertPath: dir, TLSVerify: true}, name, imageID)
	})
	t.Run("DOCKER_HOST, DOCKER_CERT_PATH and DOCKER_TLS_VERIFY", func(t *testing.T) {
		t.Setenv("DOCKER_HOST", addr)
		t.Setenv("DOCKER_CERT_PATH", dir)
		t.Setenv("DOCKER_TLS_VERIFY", "1")
		observes(t, Host{Name: "env"}, name, imageID)
	})
	t.Run("wrong CA", func(t *testing.T) {
		other := testenv.NewCA(t)
		cert, key := ca.ClientCert(t, now.Add(-time.Hour), now.Add(time.Hour))
		refuses(t, Host{Name: "wrong-ca", Addr: addr, CertPath: certDir(t, other.PEM, cert, key), TLSVerify: true}, UnknownCA, addr)
	})
	t.Run("missing client certificate", func(t *testing.T) {
		refuses(t, Host{Name: "no-cert", Addr: addr, CertPath: certDir(t, caPEM, nil, nil), TLSVerify: true}, ClientCertMissing, addr)
	})
	t.Run("client certificate of another CA", func(t *testing.T) {
		cert, key := testenv.NewCA(t).ClientCert(t, now.Add(-time.Hour), now.Add(time.Hour))
		refuses(t, Host{Name: "other-cert", Addr: addr, CertPath: certDir(t, caPEM, cert, key), TLSVerify: true}, ClientCertRefused, addr)
	})
	t.Run("expired client certificate", func(t *testing.T) {
		cert, key := ca.ClientCert(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour))
		h := Host{Name: "expired", Addr: addr, CertPath: certDir(t, caPEM, cert, key), TLSVerify: true}
		_, err := h.Observe(context.Background())
		if !errors.Is(err, ErrClientCertExpired) || !strings.HasPrefix(err.Error(), "host expired ("+addr+")") || !strings.Contains(err.Error(), "expired on") {
			t.Fatalf("error %v, want ErrClientCertExpired naming the host, its address and the date", err)
		}
		t.Logf("%v", err)
	})
	t.Run("plain http to the TLS port", func(t *testing.T) {
		refuses(t, Host{Name: "plain", Addr: addr}, NotTLS, addr)
	})
}

// writeContext stores a Docker CLI context named name for host, with TLS
// material (nil for none), in the store under configDir, as `docker
// context create` does.
func writeContext(t *testing.T, configDir, name, host string, tlsData *dcontext.TLSData) {
	t.Helper()
	s := store.New(filepath.Join(configDir, "contexts"), store.NewConfig(
		func() any { return &map[string]any{} },
		store.EndpointTypeGetter("docker", func() any { return &dcontext.EndpointMetaBase{} }),
	))
	err := s.CreateOrUpdate(store.Metadata{
		Name:      name,
		Metadata:  map[string]any{"Description": "pin test"},
		Endpoints: map[string]any{"docker": dcontext.EndpointMetaBase{Host: host}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if tlsData != nil {
		if err := s.ResetTLSMaterial(name, &store.ContextTLSData{Endpoints: map[string]store.EndpointTLSData{"docker": *tlsData.ToStoreTLSData()}}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestObserveContexts(t *testing.T) {
	addr, dir := testenv.DockerTLSHost(t)
	name, imageID := marker(t)
	cfg := t.TempDir()
	t.Setenv("DOCKER_CONFIG", cfg)
	t.Setenv("DOCKER_HOST", "")
	t.Setenv("DOCKER_CONTEXT", "")
	good := &dcontext.TLSData{CA: testenv.ReadFile(t, dir, "ca.pem"), Cert: testenv.ReadFile(t, dir, "cert.pem"), Key: testenv.ReadFile(t, dir, "key.pem")}
	writeContext(t, cfg, "prod", addr, good)
	writeContext(t, cfg, "bad-ca", addr, &dcontext.TLSData{CA: testenv.NewCA(t).PEM, Cert: good.Cert, Key: good.Key})
	writeContext(t, cfg, "gone", "unix:///nonexistent/context.sock", nil)

	t.Run("context in the catalogue", func(t *testing.T) {
		observes(t, Host{Name: "ctx", Context: "prod"}, name, imageID)
	})
	t.Run("DOCKER_CONTEXT", func(t *testing.T) {
		t.Setenv("DOCKER_CONTEXT", "prod")
		observes(t, Host{Name: "env-ctx"}, name, imageID)
	})
	t.Run("current context of the config", func(t *testing.T) {
		testenv.WriteFiles(t, cfg, map[string][]byte{"config.json": []byte(`{"currentContext": "prod"}`)})
		t.Cleanup(func() { os.Remove(filepath.Join(cfg, "config.json")) })
		observes(t, Host{Name: "current"}, name, imageID)
		// DOCKER_CONTEXT comes before the config, as in the Docker CLI.
		t.Setenv("DOCKER_CONTEXT", "gone")
		_, err := Host{Name: "current"}.Observe(context.Background())
		if err == nil || !strings.Contains(err.Error(), "context gone: unix:///nonexistent/context.sock") {
			t.Errorf("DOCKER_CONTEXT=gone with current context prod: error %v, want one naming context gone", err)
		}
	})
	t.Run("DOCKER_HOST comes before DOCKER_CONTEXT", func(t *testing.T) {
		t.Setenv("DOCKER_CONTEXT", "prod")
		t.Setenv("DOCKER_HOST", "unix:///nonexistent/env.sock")
		_, err := Host{Name: "both"}.Observe(context.Background())
		if err == nil || !strings.HasPrefix(err.Error(), "host both (unix:///nonexistent/env.sock)") {
			t.Errorf("error %v, want one naming DOCKER_HOST's socket", err)
		}
	})
	t.Run("the context's CA", func(t *testing.T) {
		refuses(t, Host{Name: "bad-ca", Context: "bad-ca"}, UnknownCA, "context bad-ca: "+addr)
	})
	t.Run("unknown context", func(t *testing.T) {
		_, err := Host{Name: "nope", Context: "nope"}.Observe(context.Background())
		if err == nil || !strings.Contains(err.Error(), `docker context "nope"`) || !strings.HasPrefix(err.Error(), "host nope (nope)") {
			t.Errorf("error %v, want one naming the host and the missing context", err)
		}
	})
	t.Run("context default is the environment", func(t *testing.T) {
		t.Setenv("DOCKER_HOST", "unix:///nonexistent/default.sock")
		_, err := Host{Name: "default", Context: "default"}.Observe(context.Background())
		if err == nil || !strings.HasPrefix(err.Error(), "host default (unix:///nonexistent/default.sock)") {
			t.Errorf("error %v, want one naming DOCKER_HOST's socket", err)
		}
	})
}

// says checks that err's text holds each of keep and none of drop.
func says(t *testing.T, err error, keep, drop []string) {
	t.Helper()
	for _, k := range keep {
		if !strings.Contains(err.Error(), k) {
			t.Errorf("error %q does not say %q", err, k)
		}
	}
	for _, d := range drop {
		if strings.Contains(err.Error(), d) {
			t.Errorf("error %q still holds %q", err, d)
		}
	}
}

// sshConfig writes an ssh_config for the test sshd whose known_hosts holds
// knownHosts, and makes the ssh wrapper use it for the rest of the test.
func sshConfig(t *testing.T, dir, knownHosts string) {
	t.Helper()
	tmp := t.TempDir()
	kh := filepath.Join(tmp, "known_hosts")
	conf := "Host 127.0.0.1\n  IdentityFile " + filepath.Join(dir, "client_key") +
		"\n  IdentitiesOnly yes\n  UserKnownHostsFile " + kh + "\n  StrictHostKeyChecking yes\n"
	testenv.WriteFiles(t, tmp, map[string][]byte{"known_hosts": []byte(knownHosts), "ssh_config": []byte(conf)})
	t.Setenv(testenv.EnvSSHConfig, filepath.Join(tmp, "ssh_config"))
}

func TestObserveSSH(t *testing.T) {
	addr, dir := testenv.SSHHost(t)
	name, imageID := marker(t)
	hostport := addr[strings.LastIndex(addr, "@")+1:]
	h, p, _ := net.SplitHostPort(hostport)

	t.Run("known host", func(t *testing.T) {
		observes(t, Host{Name: "ssh", Addr: addr}, name, imageID)
	})
	t.Run("host key mismatch", func(t *testing.T) {
		k := filepath.Join(t.TempDir(), "k")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		pub := strings.Fields(string(testenv.ReadFile(t, filepath.Dir(k), "k.pub")))
		sshConfig(t, dir, "["+h+"]:"+p+" "+pub[0]+" "+pub[1]+"\n")
		err := refuses(t, Host{Name: "mismatch", Addr: addr}, SSHHostKeyMismatch, addr)
		says(t, err, []string{"has changed and you have requested strict checking"}, []string{"@@@", "NASTY", "ssh-keygen -f"})
	})
	t.Run("refused key, after a warning", func(t *testing.T) {
		// A key the sshd does not know, and no known_hosts to keep the
		// host in: ssh says on every connection that it added the host,
		// then that it was refused.
		tmp := t.TempDir()
		k := filepath.Join(tmp, "stranger")
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("ssh-keygen: %v: %s", err, out)
		}
		conf := "Host 127.0.0.1\n  IdentityFile " + k + "\n  IdentitiesOnly yes\n  UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n"
		testenv.WriteFiles(t, tmp, map[string][]byte{"ssh_config": []byte(conf)})
		t.Setenv(testenv.EnvSSHConfig, filepath.Join(tmp, "ssh_config"))
		err := refuses(t, Host{Name: "stranger", Addr: addr}, SSHAuth, addr)
		says(t, err, []string{"Permission denied (publickey)"}, []string{"Warning", "Permanently added", "dial-stdio"})
		// ssh must have said more than the error keeps, else this shows
		// nothing.
		var ae *AccessError
		errors.As(err, &ae)
		raw := errors.Unwrap(ae.Err)
		if raw == nil {
			t.Fatalf("error %v does not wrap the helper's", err)
		}
		_, stderr, _ := strings.Cut(raw.Error(), "stderr=")
		dropped := 0
		for _, l := range strings.Split(stderr, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.Contains(err.Error(), l) {
				dropped++
			}
		}
		if dropped == 0 {
			t.Errorf("ssh said nothing to drop, the test shows nothing:\n%s", stderr)
		}
		t.Logf("ssh said:\n%s", stderr)
	})
	t.Run("unknown host", func(t *testing.T) {
		sshConfig(t, dir, "")
		refuses(t, Host{Name: "unknown", Addr: addr}, SSHHostKeyUnknown, addr)
	})
	t.Run("unreachable", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed := "ssh://root@" + l.Addr().String()
		l.Close()
		err = refuses(t, Host{Name: "down", Addr: closed}, SSHUnreachable, closed)
		says(t, err, []string{"Connection refused"}, []string{"dial-stdio"})
	})
	t.Run("timeout", func(t *testing.T) {
		// Accepts, and never says a word: ssh waits for the banner.
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				t.Cleanup(func() { c.Close() })
			}
		}()
		silent := "ssh://root@" + l.Addr().String()
		start := time.Now()
		_, err = Host{Name: "silent", Addr: silent, Timeout: time.Second}.Observe(context.Background())
		if err == nil || !strings.HasPrefix(err.Error(), "host silent ("+silent+")") {
			t.Fatalf("error %v, want one naming the host", err)
		}
		// ssh gives up after ConnectTimeout (1s); the call's own deadline
		// too. 20s is far from both, and far below ssh's default wait.
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("Observe took %v with a 1s timeout", d)
		}
		t.Logf("%v", err)
	})
}
