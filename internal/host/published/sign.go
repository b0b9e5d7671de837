package published

import (
	"bytes"
	"crypto"
	"encoding/base64"
	"fmt"
	"os"

	"github.com/sigstore/sigstore/pkg/cryptoutils"
	"github.com/sigstore/sigstore/pkg/signature"

	"github.com/pin-tool/pin/internal/atomicfile"
	"github.com/pin-tool/pin/internal/verify/sigstore"
)

// Signer signs observations with a cosign private key.
type Signer struct {
	s signature.Signer
	// Fingerprint is the key's, as a lock and a refusal name it.
	Fingerprint string
}

// LoadKey reads a cosign private key file (cosign.key: "ENCRYPTED
// SIGSTORE PRIVATE KEY" or "ENCRYPTED COSIGN PRIVATE KEY", decrypted with
// password, as cosign reads COSIGN_PASSWORD), or an unencrypted PEM
// private key.
func LoadKey(path string, password []byte) (*Signer, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("signing key: %w", err)
	}
	priv, err := cryptoutils.UnmarshalPEMToPrivateKey(b, cryptoutils.StaticPasswordFunc(password))
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w (is COSIGN_PASSWORD its password?)", path, err)
	}
	s, err := NewSigner(priv)
	if err != nil {
		return nil, fmt.Errorf("signing key %s: %w", path, err)
	}
	return s, nil
}

// NewSigner signs with priv (ECDSA, RSA or Ed25519, as cosign's keys).
func NewSigner(priv crypto.PrivateKey) (*Signer, error) {
	s, err := signature.LoadSigner(priv, crypto.SHA256)
	if err != nil {
		return nil, err
	}
	pub, err := s.PublicKey()
	if err != nil {
		return nil, err
	}
	fp, err := sigstore.Fingerprint(pub)
	if err != nil {
		return nil, err
	}
	return &Signer{s: s, Fingerprint: fp}, nil
}

// Sign returns the raw signature of body.
func (s *Signer) Sign(body []byte) ([]byte, error) {
	return s.s.SignMessage(bytes.NewReader(body))
}

// SignatureFile is the file beside an observation file that holds its
// signature.
func SignatureFile(path string) string { return path + ".sig" }

// WriteFile writes the observation to path and its base64 signature (as
// "cosign sign-blob" prints it) to path.sig, each atomically; the
// signature is written first, so that a reader never finds new content
// beside an old signature for long (it would refuse it, not believe it).
func WriteFile(path string, o *Observation, s *Signer) error {
	body, err := o.Marshal()
	if err != nil {
		return err
	}
	sig, err := s.Sign(body)
	if err != nil {
		return fmt.Errorf("signing the observation of %s: %w", o.Host, err)
	}
	b64 := []byte(base64.StdEncoding.EncodeToString(sig) + "\n")
	if _, err := atomicfile.Write(SignatureFile(path), b64, atomicfile.Options{Force: true}); err != nil {
		return err
	}
	if _, err := atomicfile.Write(path, body, atomicfile.Options{Force: true}); err != nil {
		return err
	}
	return nil
}
