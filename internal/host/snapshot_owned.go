package host

import "bytes"

// IsPinsSnapshot reports whether data is a snapshot file pin writes (its
// own JSON object, which it may replace), rather than a "docker inspect"
// array or anything else someone saved under that name.
func IsPinsSnapshot(data []byte) bool {
	t := bytes.TrimSpace(data)
	if len(t) == 0 || t[0] != '{' {
		return false
	}
	_, err := ParseSnapshot(data, "")
	return err == nil
}
