// Command htpasswd prints one bcrypt htpasswd line ("user:hash") for the
// test registry started by scripts/test, so the script needs no apache2-utils.
//
// Usage: go run ./internal/testkit/testenv/cmd/htpasswd USER PASSWORD
package main

import (
	"fmt"
	"os"

	"golang.org/x/crypto/bcrypt"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: htpasswd USER PASSWORD")
		os.Exit(2)
	}
	// The registry checks the hash on every request: the minimum cost keeps
	// authenticated tests fast, and this credential only guards a throwaway
	// loopback registry.
	hash, err := bcrypt.GenerateFromPassword([]byte(os.Args[2]), bcrypt.MinCost)
	if err != nil {
		fmt.Fprintf(os.Stderr, "htpasswd: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("%s:%s\n", os.Args[1], hash)
}
