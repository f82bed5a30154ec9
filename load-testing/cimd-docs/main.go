// A minimal Client ID Metadata Document server for benchmarking Authrim's document clients
// (docs/benchmarks.md, "Agents: client ID metadata documents, resources (issue 21)").
// GET /c/<anything>.json answers a valid public-client document whose client_id is the exact
// request URL, with Cache-Control: max-age=3600, so every distinct path is a distinct client.
// GET /bad/<anything>.json answers a document that names another URL (Authrim must refuse it).
// Standard library only, kept small so that it costs far less CPU than Authrim per request:
//
//	go run ./load-testing/cimd-docs -listen 127.0.0.1:8790
package main

import (
	"encoding/json"
	"flag"
	"log"
	"net/http"
	"strings"
)

type doc struct {
	ClientID                string   `json:"client_id"`
	ClientName              string   `json:"client_name"`
	RedirectURIs            []string `json:"redirect_uris"`
	TokenEndpointAuthMethod string   `json:"token_endpoint_auth_method"`
}

func main() {
	listen := flag.String("listen", "127.0.0.1:8790", "address to listen on (loopback)")
	redirect := flag.String("redirect-uri", "http://127.0.0.1:9/cb", "the documents' redirect_uris")
	flag.Parse()
	base := "http://" + *listen
	serve := func(self func(path string) string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet || !strings.HasSuffix(r.URL.Path, ".json") {
				http.NotFound(w, r)
				return
			}
			body, _ := json.Marshal(doc{self(r.URL.RequestURI()), "bench", []string{*redirect}, "none"})
			h := w.Header()
			h.Set("Content-Type", "application/json")
			h.Set("Cache-Control", "max-age=3600")
			w.Write(body)
		}
	}
	http.HandleFunc("/c/", serve(func(p string) string { return base + p }))
	http.HandleFunc("/bad/", serve(func(p string) string { return base + "/elsewhere.json" }))
	log.Fatal(http.ListenAndServe(*listen, nil))
}
