package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestJSONEscapesTerminalControls: what encoding/json leaves raw but a
// terminal acts on (DEL, C1 controls, bidi overrides) is escaped, and the
// JSON still decodes to the same text.
func TestJSONEscapesTerminalControls(t *testing.T) {
	in := map[string]string{"tag": "a\x7fb\u009b31mc\u202ed\u2066e"}
	var buf bytes.Buffer
	if err := writeJSON(&buf, in); err != nil {
		t.Fatal(err)
	}
	for _, raw := range []string{"\x7f", "\u009b", "\u202e", "\u2066"} {
		if bytes.Contains(buf.Bytes(), []byte(raw)) {
			t.Errorf("output holds %q raw: %q", raw, buf.String())
		}
	}
	var back map[string]string
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back["tag"] != in["tag"] {
		t.Errorf("round trip: %q %v", back["tag"], err)
	}
}
