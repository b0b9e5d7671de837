package docker

import (
	"regexp"
	"strconv"
	"strings"
)

// sshFailure is an error of the Docker CLI's ssh connection helper whose
// text keeps, of ssh's stderr, only the lines that say what went wrong:
// not the "Warning: Permanently added …" notes, the frame of a changed
// host key's alarm, or a host's pre-login banner. Unwrap gives the
// helper's error, stderr and all.
type sshFailure struct {
	msg string
	err error
}

func (f *sshFailure) Error() string { return f.msg }
func (f *sshFailure) Unwrap() error { return f.err }

// exitStatus finds how the ssh command ended in the helper's error.
var exitStatus = regexp.MustCompile(`exited with (exit status \d+|signal: [a-z ]+)`)

// trimSSH returns err as an *sshFailure when its text carries ssh's stderr
// ("…: stderr=…", as the connection helper words it), else err unchanged.
func trimSSH(err error) error {
	msg := err.Error()
	i := strings.LastIndex(msg, "stderr=")
	if i < 0 {
		return err
	}
	head, stderr := msg[:i], msg[i+len("stderr="):]
	if u, uerr := strconv.Unquote(stderr); uerr == nil {
		stderr = u // the helper quotes it when ssh did not exit in time
	}
	what := "ssh failed"
	if m := exitStatus.FindStringSubmatch(head); m != nil {
		what = "ssh exited with " + m[1]
	}
	lines := sshReason(stderr)
	if len(lines) == 0 {
		return &sshFailure{msg: what + " and said nothing on stderr", err: err}
	}
	return &sshFailure{msg: what + ": " + strings.Join(lines, " "), err: err}
}

// sshSays are the parts of the lines in which ssh says why it failed.
var sshSays = []string{
	"Permission denied",
	"Too many authentication failures",
	"Could not resolve hostname",
	"connect to host",
	"Connection refused",
	"Connection timed out",
	"Connection closed by",
	"Connection reset by",
	"No route to host",
	"kex_exchange_identification",
	"has changed and you have requested strict checking",
	"host key is known for",
	"Host key verification failed",
}

// sshReason picks the lines of ssh's stderr that say why it failed: those
// holding one of sshSays, in their order; when none does (the failure is
// the remote command's, say "docker: not found"), the last line that is
// not one of ssh's warnings nor a frame of "@". Lines are trimmed of
// white space and carriage returns.
func sshReason(stderr string) []string {
	var said []string
	last := ""
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "", strings.HasPrefix(l, "@"), strings.HasPrefix(l, "Warning:"), strings.HasPrefix(l, "WARNING:"):
			continue
		}
		last = l
		for _, s := range sshSays {
			if strings.Contains(l, s) {
				said = append(said, l)
				break
			}
		}
	}
	if len(said) == 0 && last != "" {
		said = []string{last}
	}
	return said
}
