package atomicfile

import (
	"errors"
	"os"
	"time"
)

// retry calls op until it succeeds, fails in a way transient does not
// accept, or about budget has been spent sleeping between tries (1 ms,
// doubling, at most 100 ms a time). It returns op's last error.
func retry(op func() error, transient func(error) bool, budget time.Duration, sleep func(time.Duration)) error {
	wait, slept := time.Millisecond, time.Duration(0)
	for {
		err := op()
		if err == nil || !transient(err) || slept >= budget {
			return err
		}
		d := min(wait, budget-slept)
		sleep(d)
		slept += d
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// unwrapLink drops an *os.LinkError's operation and names (the temporary
// file's name says nothing to the user), keeping the system's error.
func unwrapLink(err error) error {
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}
