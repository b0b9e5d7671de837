package truth

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestDbgMany(t *testing.T) {
	wo := map[string]bool{}
	for _, f := range strings.Split(os.Getenv("WO"), ",") {
		if f != "" {
			wo[f] = true
		}
	}
	start, _ := strconv.Atoi(os.Getenv("START"))
	shown := 0
	for n := uint64(start); shown < 8 && n < uint64(start)+3000; n++ {
		h := Play(20261203, n, wo)
		if h.Failure == nil || (os.Getenv("CHECK") != "" && h.Failure.Check != os.Getenv("CHECK")) {
			continue
		}
		s := h.Shrink()
		if len(s.Ops) > 8 {
			continue
		}
		shown++
		fmt.Println(s.Report())
	}
}
