// The cost of one RS256 signature (RSA-2048, PKCS#1 v1.5, SHA-256) through Go's crypto/rsa,
// which Hydra signs with, in a quiet loop: prints microseconds. `go run signcost.go`.
package main

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"fmt"
	"time"
)

func main() {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	digest := sha256.Sum256([]byte("bench message"))
	sign := func() {
		if _, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, digest[:]); err != nil {
			panic(err)
		}
	}
	for i := 0; i < 20; i++ {
		sign()
	}
	const n = 300
	start := time.Now()
	for i := 0; i < n; i++ {
		sign()
	}
	fmt.Printf("%.1f\n", float64(time.Since(start).Microseconds())/n)
}
