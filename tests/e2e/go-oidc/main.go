// One relying party's session against Authrim with Go's go-oidc (coreos) and x/oauth2:
// discovery (go-oidc checks that the document's issuer is the one asked for), the code flow
// with PKCE, state and nonce, the ID token verified against the JWKS (signature, iss, aud,
// exp) with its nonce and at_hash, userinfo, and a refresh through the oauth2 token source.
// The browser part (login and consent forms) is net/http with a cookie jar.
//
// Input, from the environment: ISSUER, CLIENT_ID, CLIENT_SECRET, REDIRECT_URI, USERNAME,
// PASSWORD. Output: one JSON line of what it saw, for tests/e2e/test_go_oidc.py to check.
// Exits non-zero with the library's error when any step fails.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

func env(name string) string {
	v := os.Getenv(name)
	if v == "" {
		fail(fmt.Errorf("%s is not set", name))
	}
	return v
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "go-oidc session failed:", err)
	os.Exit(1)
}

func random() string {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		fail(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

var challenge = regexp.MustCompile(`name="challenge" value="([^"]*)"`)

// formAction is the action of the page's form posting to name ("/login", or "/t/acme/login"
// at a tenant's path issuer: the pages name their issuer's own URLs), "" if it has none.
func formAction(html, name string) string {
	m := regexp.MustCompile(`action="((?:/[^"/?]+)*/` + name + `)"`).FindStringSubmatch(html)
	if m == nil {
		return ""
	}
	return m[1]
}

// browser follows the login and consent pages to the redirect back to the client.
type browser struct{ http *http.Client }

func (b browser) page(res *http.Response, err error) (*http.Response, string) {
	if err != nil {
		fail(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		fail(err)
	}
	return res, string(body)
}

// submit posts a form; a 303 to one of Authrim's own pages (the consent page after the
// login) is followed with a GET, as a browser does. Redirects to the client are not.
func (b browser) submit(base *url.URL, path string, form url.Values) (*http.Response, string) {
	res, html := b.page(b.http.PostForm(base.ResolveReference(&url.URL{Path: path}).String(), form))
	if loc := res.Header.Get("Location"); res.StatusCode == http.StatusSeeOther && strings.HasPrefix(loc, "/") {
		next, err := url.Parse(loc)
		if err != nil {
			fail(err)
		}
		return b.page(b.http.Get(base.ResolveReference(next).String()))
	}
	return res, html
}

func (b browser) authorize(authURL, redirect string) *url.URL {
	base, err := url.Parse(authURL)
	if err != nil {
		fail(err)
	}
	res, html := b.page(b.http.Get(authURL))
	field := func(html string) string {
		m := challenge.FindStringSubmatch(html)
		if m == nil {
			fail(fmt.Errorf("no challenge in page (status %d)", res.StatusCode))
		}
		return m[1]
	}
	if action := formAction(html, "login"); action != "" {
		res, html = b.submit(base, action, url.Values{"challenge": {field(html)}, "username": {env("USERNAME")}, "password": {env("PASSWORD")}})
	}
	if action := formAction(html, "consent"); action != "" {
		res, _ = b.submit(base, action, url.Values{"challenge": {field(html)}, "decision": {"allow"}})
	}
	location := res.Header.Get("Location")
	if !strings.HasPrefix(location, redirect) {
		fail(fmt.Errorf("no redirect to the client (status %d, location %q)", res.StatusCode, location))
	}
	back, err := url.Parse(location)
	if err != nil {
		fail(err)
	}
	return back
}

func main() {
	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, env("ISSUER"))
	if err != nil {
		fail(err)
	}
	redirect := env("REDIRECT_URI")
	conf := oauth2.Config{
		ClientID:     env("CLIENT_ID"),
		ClientSecret: env("CLIENT_SECRET"),
		Endpoint:     provider.Endpoint(),
		RedirectURL:  redirect,
		Scopes:       []string{oidc.ScopeOpenID, "email", "profile", oidc.ScopeOfflineAccess},
	}
	// The client is registered for client_secret_basic; AutoDetect would fall back to the body.
	conf.Endpoint.AuthStyle = oauth2.AuthStyleInHeader

	jar, _ := cookiejar.New(nil)
	b := browser{&http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	state, nonce, verifier := random(), random(), oauth2.GenerateVerifier()
	back := b.authorize(conf.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), redirect)
	if got := back.Query().Get("state"); got != state {
		fail(fmt.Errorf("state %q came back as %q", state, got))
	}
	tok, err := conf.Exchange(ctx, back.Query().Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		fail(err)
	}
	rawID, _ := tok.Extra("id_token").(string)
	idVerifier := provider.Verifier(&oidc.Config{ClientID: conf.ClientID})
	idToken, err := idVerifier.Verify(ctx, rawID)
	if err != nil {
		fail(err)
	}
	if idToken.Nonce != nonce {
		fail(fmt.Errorf("nonce %q came back as %q", nonce, idToken.Nonce))
	}
	if err := idToken.VerifyAccessToken(tok.AccessToken); err != nil {
		fail(fmt.Errorf("at_hash: %w", err))
	}
	// A token altered after signing must not verify: go-oidc is really checking.
	// (A character inside the signature: the last one may carry only padding bits.)
	at := strings.LastIndex(rawID, ".") + 10
	swap := "A"
	if rawID[at] == 'A' {
		swap = "B"
	}
	tampered := rawID[:at] + swap + rawID[at+1:]
	_, tamperedErr := idVerifier.Verify(ctx, tampered)

	info, err := provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil {
		fail(err)
	}
	var profile struct {
		Email string `json:"email"`
		Name  string `json:"name"`
	}
	if err := info.Claims(&profile); err != nil {
		fail(err)
	}

	// The token source refreshes a token past its expiry.
	expired := &oauth2.Token{AccessToken: tok.AccessToken, RefreshToken: tok.RefreshToken, Expiry: time.Now().Add(-time.Minute)}
	refreshed, err := conf.TokenSource(ctx, expired).Token()
	if err != nil {
		fail(err)
	}
	refreshedID, _ := refreshed.Extra("id_token").(string)
	renewed, err := idVerifier.Verify(ctx, refreshedID)
	if err != nil {
		fail(fmt.Errorf("refreshed ID token: %w", err))
	}

	out, _ := json.Marshal(map[string]any{
		"id_token":         map[string]any{"sub": idToken.Subject, "iss": idToken.Issuer, "aud": idToken.Audience},
		"tampered_refused": tamperedErr != nil,
		// For the test's checks that another issuer of the deployment refuses them.
		"tokens":   map[string]any{"access_token": refreshed.AccessToken, "id_token": refreshedID},
		"userinfo": map[string]any{"sub": info.Subject, "email": info.Email, "email_verified": info.EmailVerified, "name": profile.Name},
		"refreshed": map[string]any{
			"new_access_token":  refreshed.AccessToken != tok.AccessToken,
			"new_refresh_token": refreshed.RefreshToken != tok.RefreshToken,
			"id_token_sub":      renewed.Subject,
		},
	})
	fmt.Println(string(out))
}
