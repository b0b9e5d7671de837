package docker

import (
	"crypto/x509"
	"errors"
	"strings"
)

// AccessKind is why an engine could not be reached through TLS or ssh.
type AccessKind int

// The failures of access that pin names, each with what to do.
const (
	// UnknownCA: the engine's certificate is not signed by a CA pin
	// trusts (ca.pem of the cert path or context).
	UnknownCA AccessKind = iota + 1
	// BadServerCert: the engine's certificate is expired, or not for the
	// address asked.
	BadServerCert
	// ClientCertMissing: the engine asks for a client certificate and
	// none is configured.
	ClientCertMissing
	// ClientCertRefused: the engine refused the client certificate
	// presented (another CA, or revoked).
	ClientCertRefused
	// NotTLS: one side speaks TLS and the other plain HTTP.
	NotTLS
	// SSHHostKeyMismatch: the ssh host's key differs from the one
	// known_hosts holds for it.
	SSHHostKeyMismatch
	// SSHHostKeyUnknown: the ssh host is not in known_hosts.
	SSHHostKeyUnknown
	// SSHUnreachable: ssh could not connect to the host.
	SSHUnreachable
	// SSHAuth: the ssh host refused pin's keys.
	SSHAuth
)

// AccessError is a failure to reach an engine that pin recognises, with
// what to do about it. It wraps the error of the client or of ssh.
type AccessError struct {
	Kind AccessKind
	// Msg says what is wrong and what to do.
	Msg string
	Err error
}

func (e *AccessError) Error() string { return e.Msg + ": " + e.Err.Error() }
func (e *AccessError) Unwrap() error { return e.Err }

// explain recognises a TLS or ssh failure in err and says what to do;
// other errors are returned as they are, except that an ssh endpoint's
// error keeps only the lines of ssh's stderr that say what went wrong.
func (e endpoint) explain(err error) error {
	if err == nil {
		return nil
	}
	var ae *AccessError
	if errors.As(err, &ae) {
		return err
	}
	from := e.certFrom
	if from == "" {
		from = "the cert path"
	}
	msg := err.Error()
	if strings.HasPrefix(e.addr, "ssh://") {
		err = trimSSH(err) // msg keeps all of ssh's stderr to read the failure in
	}
	var unknown x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var name x509.HostnameError
	access := func(k AccessKind, m string) error { return &AccessError{Kind: k, Msg: m, Err: err} }
	switch {
	case errors.As(err, &unknown):
		return access(UnknownCA, "the engine's certificate is not signed by the CA pin trusts (ca.pem from "+from+"); put the CA that signed the engine's certificate there")
	case errors.As(err, &invalid) && invalid.Reason == x509.Expired:
		return access(BadServerCert, "the engine's certificate has expired (or this machine's clock is wrong); renew the engine's certificate")
	case errors.As(err, &invalid), errors.As(err, &name):
		return access(BadServerCert, "the engine's certificate is not valid for "+e.addr+"; connect with the name or address its certificate names")
	case strings.Contains(msg, "remote error: tls:") && !e.clientCert:
		return access(ClientCertMissing, "the engine requires a client certificate (it runs with --tlsverify) and none is configured; put cert.pem and key.pem, signed by the engine's CA, in "+from)
	case strings.Contains(msg, "remote error: tls:"):
		return access(ClientCertRefused, "the engine refused the client certificate (cert.pem from "+from+"); use one signed by the CA the engine trusts (its --tlscacert), and not expired")
	case strings.Contains(msg, "HTTP response to HTTPS client"), strings.Contains(msg, "first record does not look like a TLS handshake"):
		return access(NotTLS, "the engine speaks plain HTTP on "+e.addr+" and pin asked for TLS; drop cert_path and tls_verify, or give the engine --tlsverify")
	case strings.Contains(msg, "Client sent an HTTP request to an HTTPS server"):
		return access(NotTLS, "the engine on "+e.addr+" speaks TLS and pin asked in plain HTTP; set cert_path or tls_verify (DOCKER_CERT_PATH, DOCKER_TLS_VERIFY)")
	case strings.Contains(msg, "REMOTE HOST IDENTIFICATION HAS CHANGED"):
		return access(SSHHostKeyMismatch, "refused: the ssh host key of "+e.addr+" differs from the one in known_hosts; if the host was reinstalled, check its new key and replace the old line (ssh-keygen -R), else someone may be in the middle")
	case strings.Contains(msg, "Host key verification failed"):
		return access(SSHHostKeyUnknown, "the ssh host key of "+e.addr+" is not in known_hosts and pin never asks; check the key and add it (ssh to the host once, or ssh-keyscan)")
	case strings.Contains(msg, "Permission denied"):
		return access(SSHAuth, "the ssh host refused pin's keys: pin runs ssh with BatchMode=yes, so the key must be in ssh-agent or have no passphrase")
	case strings.Contains(msg, "ssh: connect to host"), strings.Contains(msg, "ssh: Could not resolve hostname"),
		strings.Contains(msg, "Connection timed out during banner exchange"), strings.Contains(msg, "Connection closed by"):
		return access(SSHUnreachable, "ssh could not reach "+e.addr)
	}
	return err
}
