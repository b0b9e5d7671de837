package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// serve runs a long-running pin command until the returned stop is called;
// stop returns its exit code and stderr.
func serve(t *testing.T, args ...string) (stop func() (int, string)) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	errb := &testenv.Buffer{}
	done := make(chan int, 1)
	go func() {
		done <- runWithClock(ctx, args, streams{In: strings.NewReader(""), Out: io.Discard, Err: errb}, time.Now)
	}()
	var once sync.Once
	code := -1
	stop = func() (int, string) {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(20 * time.Second):
				t.Fatal("the command did not stop in 20s")
			}
		})
		return code, errb.String()
	}
	t.Cleanup(func() { stop() })
	return stop
}

// selfSigned writes a certificate and key for 127.0.0.1 and returns their
// paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	c, _ := x509.ParseCertificate(der)
	pool = x509.NewCertPool()
	pool.AddCert(c)
	return certFile, keyFile, pool
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// TestAdmitCommand: pin admit checks its flags, serves HTTPS with the
// certificate given, allows what is outside its namespaces, and answers
// what it cannot decide (the cluster does not answer) as --failure-policy
// says, saying so. It stops on its context.
func TestAdmitCommand(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "catalogue.hcl")
	os.WriteFile(cat, []byte(`host "prod" {
  kubernetes = { kubeconfig = "`+filepath.Join(dir, "no-kubeconfig")+`", namespace = "apps" }
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  runs_on "prod" { workload = "deployment/forgejo" }
}
`), 0o644)
	certFile, keyFile, pool := selfSigned(t, dir)
	base := []string{"admit", "--catalogue", cat, "--lock", filepath.Join(dir, "pin.lock.hcl"), "--tls-cert", certFile, "--tls-key", keyFile}

	for _, bad := range [][]string{{"--failure-policy", "Maybe"}, {"--tls-cert", ""}, {"--host", "nowhere"}, {"--tls-key", cat}} {
		if r := pin(t, dir, append(base, bad...)...); r.code != exitInput {
			t.Errorf("%v: exit %d, want 2\n%s", bad, r.code, r.stderr)
		}
	}

	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	review := func(addr, namespace string) map[string]any {
		t.Helper()
		body := fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-1",
"kind":{"group":"apps","version":"v1","kind":"Deployment"},"namespace":%q,"name":"forgejo","operation":"CREATE",
"object":{"metadata":{"name":"forgejo"},"spec":{"selector":{},"template":{"spec":{"containers":[
{"name":"forgejo","image":"registry.example.org/forge/forgejo:1.22.6"}]}}}}}}`, namespace)
		var resp *http.Response
		var err error
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if resp, err = client.Post("https://"+addr+"/validate?timeout=5s", "application/json", strings.NewReader(body)); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Response map[string]any `json:"response"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		return out.Response
	}

	for _, tt := range []struct {
		policy  string
		allowed bool
		says    string
	}{{"Fail", false, "failurePolicy Fail: denied"}, {"Ignore", true, "failurePolicy Ignore: allowed unchecked"}} {
		addr := freePort(t)
		stop := serve(t, append(base, "--listen", addr, "--failure-policy", tt.policy)...)
		if r := review(addr, "elsewhere"); r["allowed"] != true || r["uid"] != "u-1" {
			t.Errorf("%s: outside the guarded namespaces: %v", tt.policy, r)
		}
		r := review(addr, "apps")
		text, _ := json.Marshal(r)
		if r["allowed"] != tt.allowed || !strings.Contains(string(text), "pin could not decide") || !strings.Contains(string(text), tt.says) {
			t.Errorf("%s: cluster down: %s", tt.policy, text)
		}
		code, stderr := stop()
		if code != 0 || !strings.Contains(stderr, `"msg":"admission undecided"`) {
			t.Errorf("%s: exit %d\n%s", tt.policy, code, stderr)
		}
	}
}

// TestAuthzCommand: pin authz activates as an authz plugin on its socket,
// allows what is not a create, and denies, or with --fail-open allows, a
// create it cannot decide (the Engine does not answer).
func TestAuthzCommand(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "pin-authz-cmd-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	cat := filepath.Join(dir, "catalogue.hcl")
	os.WriteFile(cat, []byte(`host "mesh" {
  docker = "unix://`+filepath.Join(dir, "no-engine.sock")+`"
}

module "forge" {
  image  = "registry.example.org/forge/forgejo"
  policy = "at-least-running"
  runs_on "mesh" { container = "forgejo" }
}
`), 0o644)
	sock := filepath.Join(dir, "authz.sock")
	base := []string{"authz", "--catalogue", cat, "--lock", filepath.Join(dir, "pin.lock.hcl"), "--socket", sock}
	if r := pin(t, dir, base...); r.code != exitInput || !strings.Contains(r.stderr, "--host") {
		t.Errorf("without --host: exit %d\n%s", r.code, r.stderr)
	}
	client := &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	call := func(path, body string) string {
		t.Helper()
		var resp *http.Response
		var err error
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			if resp, err = client.Post("http://plugin"+path, "application/json", strings.NewReader(body)); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	create := `{"RequestMethod":"POST","RequestURI":"/v1.41/containers/create?name=forgejo","RequestBody":"` +
		b64(`{"Image":"registry.example.org/forge/forgejo:1.22.6"}`) + `"}`
	for _, tt := range []struct {
		flags []string
		want  string
	}{{nil, `"Allow":false`}, {[]string{"--fail-open"}, `"Allow":true`}} {
		stop := serve(t, append(append(base, "--host", "mesh"), tt.flags...)...)
		if got := call("/Plugin.Activate", "{}"); !strings.Contains(got, `"Implements":["authz"]`) {
			t.Errorf("activate: %s", got)
		}
		if got := call("/AuthZPlugin.AuthZReq", `{"RequestMethod":"GET","RequestURI":"/v1.41/containers/json"}`); !strings.Contains(got, `"Allow":true`) {
			t.Errorf("a list: %s", got)
		}
		got := call("/AuthZPlugin.AuthZReq", create)
		if !strings.Contains(got, tt.want) {
			t.Errorf("%v: a create with the Engine down: %s", tt.flags, got)
		}
		if tt.flags == nil && !strings.Contains(got, "pin could not decide") {
			t.Errorf("the denial does not say why: %s", got)
		}
		if code, stderr := stop(); code != 0 || !strings.Contains(stderr, "undecided") {
			t.Errorf("exit %d\n%s", code, stderr)
		}
	}
}

func b64(s string) string {
	b, _ := json.Marshal([]byte(s))
	return strings.Trim(string(b), `"`)
}
