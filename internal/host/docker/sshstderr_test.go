package docker

import (
	"errors"
	"strings"
	"testing"
)

// helperErr is how the Docker CLI's connection helper words a failed ssh,
// with stderr as ssh wrote it (captured from the test sshd and ssh 9).
func helperErr(stderr string) error {
	return errors.New(`error during connect: Get "http://docker.example.com/v1.51/info": command [ssh -l root -p 43600 -o BatchMode=yes -o ConnectTimeout=30 -T -- 127.0.0.1 docker system dial-stdio] has exited with exit status 255, make sure the URL is valid, and Docker 18.09 or later is installed on the remote host: stderr=` + stderr)
}

const changedKey = `@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @
@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@
IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!
Someone could be eavesdropping on you right now (man-in-the-middle attack)!
It is also possible that a host key has just been changed.
The fingerprint for the ED25519 key sent by the remote host is
SHA256:8CwfblfYIamVc6GdtZY2kqBDCzD+kC9K/Sb2eVVtW4k.
Please contact your system administrator.
Add correct host key in /tmp/k/known_hosts to get rid of this message.
Offending ED25519 key in /tmp/k/known_hosts:1
  remove with:
  ssh-keygen -f "/tmp/k/known_hosts" -R "[127.0.0.1]:43600"
Host key for [127.0.0.1]:43600 has changed and you have requested strict checking.
Host key verification failed.
`

const banner = `**************************************************
*  Authorised users only. All activity is logged. *
*  Maintenance window: Sundays 02:00-04:00 UTC     *
**************************************************
`

// TestTrimSSH: of ssh's stderr, an error keeps the lines that say what
// went wrong, and drops warnings, the alarm's frame and a login banner.
// The kind pin names still comes from the whole text.
func TestTrimSSH(t *testing.T) {
	e := endpoint{addr: "ssh://root@build-7.example.org"}
	for _, tt := range []struct {
		name, stderr string
		kind         AccessKind
		want         string
		drop         []string
	}{
		{"refused key behind a banner and a warning",
			banner + "Warning: Permanently added 'build-7.example.org' (ED25519) to the list of known hosts.\r\nroot@build-7.example.org: Permission denied (publickey).\r\n",
			SSHAuth, "ssh exited with exit status 255: root@build-7.example.org: Permission denied (publickey).",
			[]string{"Authorised users", "Warning", "docker.example.com", "dial-stdio"}},
		{"changed host key", changedKey, SSHHostKeyMismatch,
			"ssh exited with exit status 255: Host key for [127.0.0.1]:43600 has changed and you have requested strict checking. Host key verification failed.",
			[]string{"@@@", "NASTY", "eavesdropping", "ssh-keygen -f"}},
		{"unknown host key", "No ED25519 host key is known for [127.0.0.1]:43600 and you have requested strict checking.\nHost key verification failed.\n", SSHHostKeyUnknown,
			"ssh exited with exit status 255: No ED25519 host key is known for [127.0.0.1]:43600 and you have requested strict checking. Host key verification failed.", nil},
		{"no such host", "ssh: Could not resolve hostname build-7.example.org: Name or service not known\r\n", SSHUnreachable,
			"ssh exited with exit status 255: ssh: Could not resolve hostname build-7.example.org: Name or service not known", nil},
		{"connection refused", "ssh: connect to host 127.0.0.1 port 44499: Connection refused\n", SSHUnreachable,
			"ssh exited with exit status 255: ssh: connect to host 127.0.0.1 port 44499: Connection refused", nil},
		{"no docker on the host", banner + "sh: 1: docker: not found\n", 0,
			"ssh exited with exit status 255: sh: 1: docker: not found", []string{"Authorised users"}},
		{"silent", "", 0, "ssh exited with exit status 255 and said nothing on stderr", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			orig := helperErr(tt.stderr)
			err := e.explain(orig)
			var ae *AccessError
			if got := errors.As(err, &ae); got != (tt.kind != 0) || (got && ae.Kind != tt.kind) {
				t.Fatalf("error %v: want kind %d", err, tt.kind)
			}
			if !errors.Is(err, orig) {
				t.Errorf("error %v does not wrap the helper's", err)
			}
			if !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("error %q\nwant it to end %q", err, tt.want)
			}
			says(t, err, nil, tt.drop)
		})
	}
}

// TestTrimSSHQuoted: when ssh does not exit in time the helper quotes its
// stderr; it is read the same.
func TestTrimSSHQuoted(t *testing.T) {
	err := trimSSH(errors.New(`command [ssh -T -- h docker system dial-stdio] did not exit after 10s: stderr="Warning: Permanently added 'h' (ED25519) to the list of known hosts.\r\nConnection closed by 10.0.0.7 port 22\r\n"`))
	if got, want := err.Error(), "ssh failed: Connection closed by 10.0.0.7 port 22"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestTrimSSHLeavesOthers: errors that carry no ssh stderr, and those of
// endpoints that are not ssh, are not touched.
func TestTrimSSHLeavesOthers(t *testing.T) {
	plain := errors.New("dial unix /run/docker.sock: connect: no such file or directory")
	if got := (endpoint{addr: "ssh://root@h"}).explain(plain); got != plain {
		t.Errorf("no stderr: got %v", got)
	}
	other := helperErr("Warning: something\nPermission denied (publickey).\n")
	if got := (endpoint{addr: "tcp://127.0.0.1:2376"}).explain(other); !strings.Contains(got.Error(), "Warning: something") {
		t.Errorf("tcp endpoint: got %v", got)
	}
}
