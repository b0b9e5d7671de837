package admit

import (
	"path/filepath"
	"testing"

	"github.com/pin-tool/pin/internal/testkit/testenv"
)

// testCA makes a CA and a server certificate for 127.0.0.1 signed by it
// (testenv's CA), as examples/kubernetes/admission/README.md makes them
// with openssl; it returns the CA's PEM and the paths of the server's
// certificate and key.
func testCA(t *testing.T, dir string) (caPEM []byte, certFile, keyFile string) {
	t.Helper()
	ca := testenv.NewCA(t)
	cert, key := ca.ServerCert(t)
	testenv.WriteFiles(t, dir, map[string][]byte{"tls.crt": cert, "tls.key": key})
	return ca.PEM, filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
}
