# Authrim's pages in English. Messages may hold HTML (they are ours, or the operator's);
# arguments ({ $name }) are escaped. A theme directory's locales/<lang>.ftl adds to or
# overrides these.
language-name = English

continue-to = to continue to { $client }
login-for-organization = for { $organization }, to continue to { $client }
signed-in-as = Signed in as { $user }
continue = Continue
cancel = Cancel
done = Done
back-to-account = Back to your account
date-never = never

error-title = Error
error-heading = This request cannot be completed
error-detail = Details:
error-back = Return to the application you came from and try again.
error-home = Go to the start page
error-account = Go to your account

login-title = Sign in
login-heading = Sign in
login-username = Username or e-mail
login-password = Password
login-submit = Sign in
login-passkey = Sign in with a passkey
passkey-not-used = The passkey was not used. Try again, or use another way.
passkey-name = Name for this passkey
passkey-name-placeholder = My laptop

second-factor-title = Verify it is you
second-factor-heading = Verify it is you
second-factor-use-passkey = Use a passkey
second-factor-code = Code from your authenticator app, or a recovery code
second-factor-submit = Verify

select-title = Choose an account
select-heading = Choose an account
select-current = Continue as { $user }
select-other = Use another account

consent-title = Allow access
consent-heading = Allow { $client } access?
consent-self-registered = “{ $client }” registered itself with this service: its name, logo and links are its own, not checked by anyone here.
consent-document-host = This application is not registered here; it is identified by its address on <strong>{ $host }</strong>.
consent-asks = { $client } asks to:
consent-resources = With access to:
consent-allow = Allow
consent-deny = Deny
consent-home = About { $client }
consent-policy = Privacy policy
consent-terms = Terms of service
request-done-title = Request complete
request-done-heading = This request is complete
request-done-body-client = You have already answered { $client }'s request: it has gone back to the application.
request-done-body = You have already answered this request: it has gone back to the application.
request-done-next = To use the application, go back to it (this page is not needed any more). To see or withdraw what you have allowed, go to your account.
request-done-to-client = Go to { $client }
scope-openid = know who you are
scope-profile = see your name and profile
scope-email = see your e-mail address
scope-address = see your postal address
scope-phone = see your phone number
scope-offline_access = keep access while you are away

logout-title = Sign out
logout-heading = Sign out of { $product }?
logout-submit = Sign out
logout-not-asked = If you did not ask to sign out, close this page: you stay signed in.
signed-out-title = Signed out
signed-out-heading = You are signed out
signed-out-apps = Signing you out of your applications…
signed-out-close = You can close this page.
signed-out-sign-in-again = Sign in again

form-post-title = Returning to the application
form-post-heading = Returning to the application

landing-title = Welcome
landing-heading = Welcome
landing-intro = This is an OpenID Connect sign-in service. Applications send you here to sign in.
landing-demo-heading = Try it
landing-demo-intro = Demo mode is on: a demo application signs in here and shows the tokens it receives and what userinfo says about you.
landing-demo = Open the demo application
landing-apps-heading = Applications
landing-links-heading = Where to go
landing-account = Your account: passkeys, authenticator apps, recovery codes
landing-console = Admin console: applications, users, keys, audit log
landing-discovery = Discovery document (for developers)
landing-docs = Documentation: <code>README.md</code> and the <code>docs/</code> folder in Authrim's source repository

demo-title = Demo application
demo-heading = Demo application
demo-intro = This application runs inside Authrim as the client <code>demo-client</code>. It signs in like any application: it sends you to the sign-in page with state, a nonce and PKCE, redeems the code it gets back at the token endpoint, checks the ID token and asks userinfo, then shows you all of it.
demo-credentials = Sign in as the demo user; its name and password are printed in the terminal where Authrim started.
demo-sign-in = Sign in to the demo
demo-signed-out = You are signed out. The demo application asked for it, and Authrim sent you back here.
demo-back-home = Back to the start page
demo-signed-in-title = Signed in to the demo
demo-signed-in-heading = Signed in to the demo
demo-signed-in-intro = The demo application redeemed its authorization code at the token endpoint. This is what it received.
demo-token-response = Token response
demo-id-token = ID token claims
demo-access-token = Access token claims
demo-userinfo = Userinfo answer
demo-claim = Claim
demo-value = Value
demo-sign-out = Sign out
demo-sign-in-again = Sign in again
passkeys-off-ip = Passkeys are off: this server's address ({ $issuer }) is an IP address, and passkeys need a domain name. To turn them on, start Authrim with <code>AUTHRIM_ISSUER={ $suggest }</code> and open it at that address.
passkeys-off-disabled = Passkeys are turned off on this server. An administrator can turn them on with the setting <code>passkeys = true</code> (<code>AUTHRIM_PASSKEYS=true</code>).

account-title = Your account
account-heading = Your account
account-methods = Sign-in methods
factor-kind-passkey = Passkey
factor-kind-totp = Authenticator app
account-added = added { $date }
account-last-used = last used { $date }
account-remove = Remove
account-remove-named = Remove { $name }
account-password-only = You sign in with your password only.
account-reauth-note = Changes ask you to sign in again first, since you signed in a while ago.
account-add-passkey = Add a passkey
account-add-totp = Add an authenticator app
account-recovery = Recovery codes
account-recovery-left = { $count ->
    [0] You have no recovery codes. Make a set, so that you can sign in if you lose your other methods.
    [one] 1 unused recovery code. It signs you in once if you lose your other methods.
   *[other] { $count } unused recovery codes. Each signs you in once if you lose your other methods.
}
account-recovery-new = Make new recovery codes
account-sign-out = Sign out
notice-passkey = Your passkey was added.
notice-totp = Your authenticator app was added.
notice-removed = The sign-in method was removed.

account-password = Password
account-change-password = Change your password
notice-password = Your password was changed. Your other sessions were signed out.
password-title = Change your password
password-heading = Change your password
password-current = Current password
password-new = New password (at least { $min } characters)
password-confirm = New password again
password-submit = Change the password
password-mismatch = The two new passwords are not the same.
password-current-wrong = The current password is not right.
password-too-weak = The new password must have { $min } to 1024 characters.

reauth-title = Sign in again
reauth-heading = Confirm it is you
reauth-body = To change how you sign in, sign in again first (your last sign-in was more than { $minutes ->
    [one] a minute
   *[other] { $minutes } minutes
} ago).
reauth-link = Sign in again
not-signed-in-title = Not signed in
not-signed-in-heading = You are not signed in
not-signed-in-body = The sign-in did not complete, or its link was already used.
not-signed-in-link = Sign in to your account
failed-title = Not changed
failed-heading = Nothing was changed
failed-passkey-expired = The passkey was not added: the page expired. Try again.
failed-passkey-refused = The passkey was not added: your device's answer could not be verified, or it is already registered.
failed-totp-expired = The authenticator app was not added: the page expired. Try again.
failed-recovery-download = The codes can no longer be downloaded: this page expired. Make new recovery codes and download them at once.

passkey-setup-title = Add a passkey
passkey-setup-heading = Add a passkey
passkey-setup-body = Your device will ask you to confirm with your screen lock, fingerprint or security key.
passkey-create = Create the passkey
passkey-needs-js = Passkeys need JavaScript in this browser.
totp-title = Add an authenticator app
totp-heading = Add an authenticator app
totp-scan = Scan this code with your authenticator app:
totp-qr-label = QR code of the secret for your authenticator app
totp-type-key = Or type this key:
totp-code = The 6-digit code your app shows
totp-name = Name for this app
totp-name-placeholder = Phone
totp-submit = Add
totp-wrong = That code is not right. Enter the code your app shows now.
recovery-title = Recovery codes
recovery-heading = Your recovery codes
recovery-body = Keep these somewhere safe: each signs you in once. They are shown only now; the earlier codes no longer work.

err-form-expired = This form has expired or was already used. Return to the application and sign in again.
login-expired = This sign-in page was open too long, so it started over. Sign in again to continue to the application.
err-second-factor-expired = This form has expired. Return to the application and sign in again.
err-too-many = Too many failed sign-in attempts. Wait a few minutes and try again.
err-busy = The service is busy. Please try again in a moment.
err-unavailable = The service is temporarily unavailable. Please try again.
err-no-cookie = Your browser did not send back the cookie this form relies on. Allow cookies for this site and try again.
err-client-gone = The application that sent you here is no longer registered.
err-session-ended = Your session has ended. Return to the application and sign in again.
err-choose = Choose Allow or Deny.
err-choose-account = Choose an account to continue with.
err-incorrect = Incorrect username or password.
err-needs-passkey = Signing in here needs a passkey. Use one of your passkeys, or ask your administrator to set one up.
err-needs-passkey-none = Signing in here needs a passkey, and your account has none yet. Ask your administrator to set one up, or add one on your account page.
err-needs-factor-none = Signing in here needs a second factor (a passkey or an authenticator app), and your account has none yet. Ask your administrator to set one up, or add one on your account page.
err-second-factor-wrong = That did not work: the code is not right or was already used, or the passkey was refused.
err-passkey-expired = The passkey sign-in has expired. Try again.
err-passkey-refused = That passkey could not be used to sign in. Try again, or use your password.
err-bad-request = The application sent a sign-in request that cannot be used.
err-request-too-large = The request is too large.
err-not-found = There is no page at this address.
err-method = This page cannot be used that way. Go back and try again.
err-form-only = This address only receives the sign-in form. To sign in to an application, start again from the application.
err-no-client = The request names no application (client_id is missing).
err-request-uri-used = This sign-in link has expired or was already used. Return to the application and start again.
err-bad-redirect = The address to return to is not valid.
err-form-not-post = This page must be reached by a form post.
err-form-unreadable = The form is too large or could not be read.
err-logout-unreadable = The sign-out form could not be read.
err-logout-expired = This sign-out form has expired or was not made for this browser. Please try again.
err-logout-invalid = The sign-out request cannot be used.
err-account-form-expired = This form has expired. Reload your account page and try again.
err-account-form-unreadable = This form could not be read. Reload your account page and try again.
err-demo-query = The callback's query string is malformed.
err-demo-failed = The authorization failed.
err-demo-no-code = This page expects an authorization code issued by this server.
err-demo-no-request = This sign-in was not started by the demo application here, or it is over. Start again from the demo page.
err-demo-state = The state in this answer is not the one the demo application sent. Start again from the demo page.
err-demo-token = The token endpoint refused the demo application's code, or its ID token did not check out.
err-demo-userinfo = Userinfo refused the demo application's access token.

# The admin console.
copy = Copy
copied = Copied
console-title = Admin console
console-heading = Admin console
console-nav = Console
console-home = Overview
console-clients = Clients
console-users = Users
console-keys = Signing keys
console-audit = Audit log
console-role-admin = administrator
console-role-auditor = auditor (read only)
console-sign-in = Sign in to the console
console-denied-heading = No access to the console
console-denied = { $user } has no console role. An administrator can give one on the user's page, or with <code>authrim user update NAME --role admin</code>.
console-needs-factor-heading = Add a second factor first
console-needs-factor = The console needs a second factor (a passkey or an authenticator app). Add one on your account page, then come back.
console-go-account = Go to your account
console-read-only-heading = Read only
console-read-only = Your role lets you look, not change anything.
console-refused-heading = Not done
console-refused = This was not done:
console-not-found-heading = Not found
console-not-found = Nothing here: it may have been deleted.
console-delete-self = You cannot delete yourself; ask another administrator.
console-done-created = Created.
console-done-saved = Saved.
console-done-deleted = Deleted.
console-done-ended = Sessions ended.
console-done-removed = Removed.
console-done-rotated = Rotation started: the new key is published and will sign after the publication delay.
console-count-clients = { $count ->
    [one] client
   *[other] clients
}
console-count-users = { $count ->
    [one] user
   *[other] users
}
console-count-algs = { $count ->
    [one] signing algorithm
   *[other] signing algorithms
}
console-recent = Recent events
console-audit-all = The whole audit log
console-no-events = No events.
console-col-time = Time
console-col-event = Event
console-col-user = User
console-col-client = Client
console-col-address = Address
console-col-detail = Detail
console-col-client-id = Client ID
console-col-name = Name
console-col-method = Client authentication
console-col-grants = Grant types
console-response-types = Tokens from the authorization endpoint (hybrid and implicit)
console-response-types-hint = Only for applications that need them: RFC 9700 discourages returning tokens in the browser. The sign-in grant is still needed for the types with a code.
console-col-created = Created
console-col-username = Username
console-col-email = E-mail
console-col-roles = Roles
console-col-status = Status
console-col-signed-in = Signed in
console-col-how = Methods
console-col-agent = Browser
console-col-clients = Applications
console-col-alg = Algorithm
console-col-state = State
console-col-activated = Signing since
console-col-retired = Retired
console-no-clients = No clients yet.
console-client-new = New client
console-client-title = Client
console-client-heading = Client { $id }
console-client-metadata = Registration
console-client-id-hint = Leave empty to have one generated.
console-redirect-uris = Redirect URIs
console-one-per-line = One per line, matched exactly.
console-logout-uris = Post-logout redirect URIs
console-scope = Scopes it may ask for
console-jwks-uri = JWK Set URL (for private_key_jwt)
console-backchannel-uri = Back-channel logout URL
console-initiate-login-uri = Sign-in start URL (https)
console-initiate-login-uri-hint = Where the application starts a sign-in itself (OpenID Connect third-party initiated login); it is then listed on the start page and on its users' account pages.
console-refresh-grace = Refresh token reuse grace (seconds)
console-refresh-grace-hint = How long a retry with the refresh token just replaced gets the same new token, for applications open in several tabs. 0: never (any reuse signs the user out everywhere). Empty: the server's setting.
console-sign-in-policy = Sign-in policy
console-require-mfa = Require a second factor
console-require-passkey = Require a passkey
console-create = Create
console-save = Save
console-danger = Irreversible
console-rotate-secret = New secret
console-delete-client = Delete this client
console-back-clients = Back to clients
console-client-created = Client created
console-secret-title = Client secret
console-secret-heading = New client secret
console-secret-once = Copy the secret now: it is shown only once and cannot be read again. The previous secret no longer works.
console-secret-done = I have copied it
console-search-users = Find by username, e-mail or id
console-search = Search
console-users-shown = Showing { $shown } of { $total }.
console-user-new = New user
console-user-title = User
console-user-heading = User { $user }
console-user-id = ID (sub): { $id }
console-updated = updated { $date }
console-user-profile = Profile
console-email-verified = E-mail verified
console-password = Password
console-password-hint = At least 8 characters.
console-new-password = New password
console-new-password-hint = Leave empty to keep the current one.
console-user-disabled = Disabled (cannot sign in; their sessions end)
console-disabled = disabled
console-active = active
console-factors = Second factors
console-no-factors = None.
console-reset-factors = Remove all factors and recovery codes
console-sessions = Sessions
console-no-sessions = No live session.
console-end-session = End
console-end-session-at = End the session signed in at { $date }
console-end-all = End all sessions
console-user-events = This user's events
console-delete-user = Delete this user
console-back-users = Back to users
console-keys-intro = A rotation publishes a new key at once; it signs after { $minutes } minutes, and the previous key stays published until its tokens have expired.
console-key-active = signing
console-key-next = published, not yet signing
console-key-retired = retired
console-rotate = Rotate a key
console-rotate-submit = Start a rotation
console-filter-user = User (username, e-mail or id)
console-filter-client = Client (id or name)
console-filter-since = Since (day)
console-filter-limit = At most
console-filter = Filter
console-col-actor = By
console-all-events = All events
console-actor-token = admin API token
console-actor-cli = command line
console-actor-bootstrap = first start (bootstrap_admin)
console-actor-server = Authrim
console-no-such-user = No user is named “{ $user }” (username, e-mail or id), and no event names that id.
console-no-such-client = No client has the id or name “{ $client }”, and no event names that id.
console-no-such-event = “{ $event }” is not a kind of event Authrim records.
console-bad-day = The day is not a date (YYYY-MM-DD); it was ignored.
console-secret-once-new = Copy the secret now: it is shown only once and cannot be read again.
console-type-question = What kind of application is it?
console-type-web = Web application
console-type-web-hint = Runs on a server and keeps a secret (a classic website, a back end for front end).
console-type-spa = Single-page application
console-type-spa-hint = JavaScript in the browser: no secret, PKCE, calls the token endpoint from its own origin.
console-type-native = Native or mobile app
console-type-native-hint = Installed on a phone or a computer: no secret, PKCE, returns through its own scheme or a local port.
console-type-m2m = Machine to machine
console-type-m2m-hint = A service that calls APIs as itself, with no user: a secret and the client credentials grant.
console-type-mcp = MCP client or agent
console-type-mcp-hint = An AI agent or MCP client acting for a user: no secret, PKCE, a local or https redirect, refresh tokens.
console-continue = Continue
console-type-chosen = Type: { $type }.
console-type-change = Choose another type
console-redirect-hint-web = Use https addresses (http only on localhost while developing).
console-redirect-hint-spa = Use https addresses of the pages that sign in (http only on localhost while developing); their origins may call the token endpoint.
console-redirect-hint-native = Use the app's own scheme (com.example.app:/callback), a local port (http://127.0.0.1/callback, any port matches) or https.
console-redirect-hint-mcp = Use a local port (http://127.0.0.1/callback, any port matches), the app's own scheme or https.
console-advanced = Advanced settings
console-grant-code = Sign users in
console-grant-refresh = Keep users signed in (refresh tokens)
console-grant-client-credentials = Call APIs as itself, with no user
console-grant-token-exchange = Exchange tokens for other APIs
console-method-client_secret_basic = Secret, in the Authorization header
console-method-client_secret_post = Secret, in the request body
console-method-client_secret_jwt = A JWT signed with the secret
console-method-private_key_jwt = A JWT signed with the application's private key
console-method-none = None: a public application, with PKCE
console-scope-hint = Separated by spaces: openid, profile, email, offline_access and your APIs' scopes.
console-created-public = This application has no secret: it proves itself with PKCE at each sign-in.
console-issuer = Issuer
console-discovery = Discovery document
console-client-secret = Client secret
console-settings-heading = The application's settings
console-settings-hint = As environment variables, for the application's OpenID Connect library:
console-copy-settings = Copy the settings
console-go-client = Go to the client's page
console-uri-spaces = “{ $uri }” contains spaces or control characters: one address per line, without spaces.
console-uri-not-absolute = “{ $uri }” is not a complete address: write it with its scheme and host, such as https://app.example/callback.
console-uri-fragment = “{ $uri }” has a # part, which a redirect address may not have.
console-uri-userinfo = “{ $uri }” has a user name or password before its host, which an address here may not have.
console-uri-http = “{ $uri }” uses http, which only addresses on this computer (localhost, 127.0.0.1) may: use https.
console-uri-scheme = “{ $uri }” uses a scheme that is not allowed: use https, http on localhost, or the app's own scheme (com.example.app:/callback).
console-uri-web-only = “{ $uri }” is not a web address: this type of application returns to https addresses (http only on localhost).
console-err-client-id = A client ID is at most 128 printable characters, without spaces, “:” or “%”.
console-err-client-id-taken = Another client already has this client ID.
console-err-name = The name is at most 200 characters, on one line.
console-err-no-redirects = A machine-to-machine client signs no user in, so it has no redirect addresses: leave them empty.
console-err-no-grants = Choose at least one way for the application to get tokens.
console-err-needs-redirect = An application that signs users in needs at least one redirect URI: the address users return to after signing in.
console-err-public-grant = An application without a secret cannot call APIs as itself or exchange tokens: choose an authentication with a secret or a key.
console-err-needs-keys = Authentication with a private key needs the JWK Set URL where the application publishes its public key.
console-err-scope = “{ $scope }” is not a scope: scopes are separated by spaces and contain no quotes or backslashes.
console-err-grace = The reuse grace is a whole number of seconds from 0 to { $max }.
console-err-other = The server gave this reason:
console-recovery-left = { $count ->
    [0] No recovery codes.
    [one] One recovery code left.
   *[other] { $count } recovery codes left.
}
err-console-form-expired = This form has expired or was not sent from your console session. Reload the console page and try again.

# Upstream identity providers.
login-with = Sign in with { $name }
err-upstream-unknown = This way of signing in is not offered here.
err-upstream-state = This sign-in has expired or was started in another browser. Go back to the application and try again.
err-upstream-unavailable = { $name } cannot be reached right now. Try again in a moment, or sign in another way.
err-upstream-cancelled = The sign-in with { $name } did not complete.
err-upstream-refused = The answer from { $name } could not be trusted, so you are not signed in.
err-upstream-domain = Your { $name } account is not one this service lets in.
err-upstream-disabled = The account linked to this sign-in is disabled.
err-upstream-no-account = No account here is linked to your { $name } account. Sign in with your password, then link it from your account page.
err-upstream-email-taken = An account here already uses this e-mail address. Sign in to it with your password, then link your { $name } account from your account page.
err-upstream-linked-elsewhere = This { $name } account is linked to another user.
err-upstream-already-linked = Your account is already linked to a { $name } account. Remove that link first.
err-directory-unreachable = The directory that holds your account is not reachable right now. Try again in a moment.
err-directory-name-taken = An account here already uses this name or e-mail address, so your directory account cannot be added. Ask your administrator.
err-directory-password-read-only = Your password is kept by your organization's directory and cannot be changed here. Change it where your organization manages passwords.
err-directory-link-kept = Your account comes from your organization's directory: that link cannot be removed.
account-linked = Linked accounts
account-link = Link
account-link-named = Link your { $name } account
account-unlink = Remove
account-unlink-named = Remove the link to { $name }
notice-linked = The account was linked: you can sign in with it.
notice-unlinked = The link was removed.
account-profile = Profile
account-edit-profile = Change your name, e-mail and language
profile-title = Your profile
profile-heading = Your profile
profile-name = Full name
profile-given-name = Given name
profile-family-name = Family name
profile-email = E-mail
profile-email-hint = A new address is shown to applications as not verified.
profile-locale = Language and region
profile-locale-hint = A language tag such as en-GB or ja-JP; applications may use it.
profile-submit = Save
profile-too-long = A field is longer than 256 characters or holds control characters.
profile-email-invalid = This is not an e-mail address.
profile-email-taken = Another account signs in with this e-mail address.
profile-invalid = This profile cannot be saved:
notice-profile = Your profile was saved.

# Password reset.
login-forgot = Forgot your password?
forgot-title = Reset your password
forgot-heading = Reset your password
forgot-intro = Enter your username or e-mail address. If there is an account, we send a link to set a new password to its e-mail address.
forgot-submit = Send the link
forgot-sent = If there is an account with that name, a link to set a new password is on its way to its e-mail address.
forgot-sent-note = The link works once, for a short while. Nothing came? Check the spam folder, or ask your administrator.
reset-title = Set a new password
reset-heading = Set a new password
reset-submit = Set the password
reset-done = Your password was changed, and every session of your account was signed out. Return to the application and sign in with the new password.
err-reset-link = This link does not work: it was already used, or it expired. Ask for a new one from the sign-in page.
err-reset-off = Password reset is not available here. Ask your administrator.
mail-reset-subject = Reset your { $product } password
mail-reset-body = Someone asked to reset the password of your { $product } account. To set a new password, open this link within { $minutes } minutes:

    { $link }

    If it was not you, ignore this message: your password stays as it is.

# Self-registration.
login-no-account = No account yet?
login-signup = Create one
signup-title = Create an account
signup-heading = Create an account
signup-username = Username
signup-field-email = E-mail
signup-field-name = Full name
signup-field-given_name = Given name
signup-field-family_name = Family name
signup-optional = (optional)
signup-password-hint = At least { $min } characters; not your username, nor a password known from a breach.
signup-submit = Create the account
signup-sent = Almost done: open the link we sent to your e-mail address to finish. It works for a limited time.
signup-done = Your account is ready. Return to the application and sign in.
signup-to-account = Go to your account
signup-verify-heading = Confirm your e-mail address
signup-verify-submit = Confirm and create my account
signup-missing = A required field is empty: { $field }.
signup-password-length = The password must have { $min } to 1024 characters.
signup-username-taken = This username cannot be used. Choose another.
password-is-username = The password must not be your username.
password-breached = This password is known from a data breach. Choose another.
err-signup-off = Creating an account is not available here.
err-signup-link = This link does not work: it was already used, or it expired. Sign up again.
mail-verify-subject = Confirm your e-mail address for { $product }
mail-verify-body = To finish creating your { $product } account, open this link within { $hours } hours:

    { $link }

    If it was not you, ignore this message: no account is created.
signup-password-wrong = That is not the password chosen for this sign-up.
mail-signup-exists-subject = Someone tried to sign up for { $product } with your address
mail-signup-exists-body = Someone tried to create a new { $product } account with this e-mail address, which already has one (username: { $username }). No account was created and nothing changed.

    If it was you, sign in with that account. If you forgot its password, you can set a new one here:

    { $link }

    If it was not you, ignore this message.
signup-verify-username-taken = The username { $username } was taken before you confirmed. Choose another, and enter the password you chose, to create your account.
err-signup-email-taken = This e-mail address already has an account. Sign in with it, or set a new password from the sign-in page.
err-too-many-requests = Too many requests from here. Wait a few minutes and try again.
account-email = E-mail: { $email }
account-email-verified = (verified)
account-email-unverified = (not verified)
account-send-verification = Send a verification link
profile-email-hint-mail = A new address is shown to applications as not verified until you open the link we send to it.
notice-profile-verify = Your profile was saved. Open the link we sent to your new e-mail address to verify it.
notice-verify-sent = A verification link was sent to your e-mail address.
# The account page: where the user is signed in, the applications they allowed.
account-sessions = Where you are signed in
account-sessions-intro = Each browser or device signed in to your account. Signing one out here ends its session, and the applications it signed you in to lose what they got through it.
account-device = { $browser } on { $system }
account-device-unknown = Unknown browser
account-session-this = This browser
account-session-address = from { $address }
account-session-signed-in = signed in
account-session-seen = last seen
account-session-end = Sign out
account-session-end-named = Sign out { $device }, signed in { $date }
notice-session-ended = That session was signed out.
account-applications = Applications you allowed
account-applications-intro = These applications may use your account as listed. Withdrawing makes an application ask you again next time and ends its long-lived access.
account-application-allowed = allowed
account-application-withdraw = Withdraw
account-application-withdraw-named = Withdraw the access of { $name }
account-no-applications = You have not allowed any application yet.
notice-withdrawn = The access was withdrawn. The application will ask you again.
# Recovery codes: download and print, and the downloaded file's words.
recovery-download = Download
recovery-print = Print
recovery-file-heading = Recovery codes for { $user } at { $issuer }
recovery-file-made = Made { $date }
recovery-file-body = Each code signs you in once, when your other sign-in methods are not at hand. Keep this file somewhere safe.
verify-email-title = Verify your e-mail address
verify-email-submit = Confirm my e-mail address
verify-email-done-heading = E-mail address verified
verify-email-done = Your e-mail address is verified.
err-verify-email-link = This link does not work: it was already used, it expired, or the address has changed since. Send a new one from your account page.
mail-verify-email-subject = Verify your e-mail address for { $product }
mail-verify-email-body = To verify this e-mail address for your { $product } account, open this link within { $hours } hours:

    { $link }

    If it was not you, ignore this message: nothing changes.
mail-email-changed-subject = The e-mail address of your { $product } account was changed
mail-email-changed-body = The e-mail address of your { $product } account { $username } was changed from this one to { $new_email }.

    If it was you, there is nothing to do. If not, reset your password and contact the people who run { $product }: someone else may be using your account.
mail-factor-locked-subject = Sign-ins to your { $product } account are paused
mail-factor-locked-body = Someone signed in to your { $product } account { $username } with its password, then entered wrong codes from your authenticator app or your recovery codes too many times. Codes are refused for the next { $minutes } minutes.

    If it was you, wait and try again, or sign in with a passkey if you have one. If not, someone knows your password: reset it now, and contact the people who run { $product } if you cannot.

## The device verification page (RFC 8628: a TV, a command line or an agent asks to sign in)
device-title = Connect a device
device-heading = Connect a device
device-enter = Enter the code your device shows.
device-code-label = Code
device-continue = Continue
device-code-malformed = That is not a code of the kind devices show: 8 letters, like BCDF-GHJK.
device-code-unknown = That code is not recognised, or has expired. Check it against your device's screen, or start again on the device.
device-code-too-many = Too many codes that did not match. Wait a few minutes and try again.
device-confirm-heading = Connect { $client }?
device-compare = Check that this is the code your device shows:
device-warning = Allow only if you started this on a device of your own just now. Someone who sent you this code could get access to your account.
device-approved-heading = Device connected
device-approved = { $client } is allowed. Go back to your device: it continues by itself.
device-denied-heading = Request denied
device-denied = { $client } was not allowed. Your device will say so.
err-device-form-expired = This form has expired. Enter the code from your device again.
err-device-request-gone = This device request is no longer waiting for an answer: it expired or was already answered. Start again on the device.
err-device-not-signed-in = The sign-in did not complete. Open the address your device shows and try again.
err-device-needs-stronger = This application needs a stronger sign-in (a second factor or a passkey). Enter the code again and sign in with it.
console-type-device = Device without a browser
console-type-device-hint = A TV, a command line or another device that shows a code: no secret, no redirect; the user signs in on another screen (device authorization grant).
console-grant-device = Sign users in on another screen (device code)
console-grant-ciba = Let users approve a sign-in an application asks for on their account page (CIBA, poll)
console-created-public-device = This application has no secret: it names itself by its client id, and its users sign in on another screen with the code it shows.

## Sign-in requests on the account page (CIBA: an application asks, through its own channel, that you approve a sign-in)
account-requests = Sign-in requests
account-requests-intro = Applications that ask you to approve a sign-in they started elsewhere (a call centre, a terminal, another device). Approve only if you started it and the message matches what you see there.
account-request-binding = Message: { $message }
account-request-asked = Asked
account-request-until = Expires
account-request-approve = Approve
account-request-approve-named = Approve the sign-in request of { $name }
account-request-deny = Deny
account-request-deny-named = Deny the sign-in request of { $name }
notice-request-approved = The sign-in request was approved: the application is signed in.
notice-request-denied = The sign-in request was denied.
account-user-code = Code for sign-in requests
account-user-code-intro = Some applications (a call centre, a shop's terminal) must give this code when they ask you to approve a sign-in here. Tell it only to those you trust; a request without it is refused.
account-user-code-is-set = You have set a code.
account-user-code-not-set = You have not set a code.
account-user-code-new = New code (4 to 64 characters)
account-user-code-save = Save the code
account-user-code-remove = Remove the code
notice-user-code = Your code for sign-in requests was saved.
notice-user-code-removed = Your code for sign-in requests was removed.
notice-user-code-invalid = The code must be 4 to 64 characters, without line breaks. Nothing was changed.
err-ciba-needs-stronger = This application needs a stronger sign-in (a second factor or a passkey). Sign out, sign in again with it, and approve the request then.
err-ciba-push-failed = Your answer could not be prepared for the application. Nothing was recorded; try again in a moment.
mail-ciba-subject = An application asks you to approve a sign-in to { $product }
mail-ciba-body = { $client } asks you to approve a sign-in with your { $product } account. { $binding }

    To approve or deny it, open your account page:

    { $link }

    If you did not start it, deny it: nothing is shared until you approve.
mail-ciba-binding = Its message: “{ $message }”.

# Tenants (the deployment's console only)
console-tenants = Tenants
console-tenants-intro = Each tenant is an issuer of its own, with its own keys, applications, users and sign-in pages. A tenant's applications and users are managed in its own console, at its issuer followed by /console.
console-col-slug = Slug
console-col-issuer = Issuer
console-col-actions = Actions
console-tenant-active = Active
console-tenant-disabled = Disabled
console-tenant-deleting = Being deleted
console-tenant-deleted = Deleted
console-tenant-disable = Disable
console-tenant-enable = Enable
console-tenant-delete = Delete with all its data
console-tenant-confirm = Type { $slug } to delete it
console-tenant-new = New tenant
console-tenant-slug = Slug
console-tenant-slug-help = Its name in URLs: lower-case letters, digits and dashes. It never changes and is never given again.
console-tenant-host = Its own host (optional)
console-tenant-name = Name on its pages (optional)
console-tenant-settings-title = Tenant settings
console-tenant-settings = Settings of { $slug }
console-tenant-settings-intro = What this tenant sets differently from the deployment. An empty field, or “The deployment's”, keeps the deployment's value.
console-tenant-pages = Its pages
console-tenant-sign-in = Sign-in and sign-up
console-tenant-deployments = The deployment's
console-tenant-locale = Default language
console-tenant-css = Style sheet
console-tenant-css-help = Added after the deployment's style sheet, on this tenant's pages only. Setting the built-in variables is the usual way: :root { "{" } --accent: #0b7a55; --bg: #eef6f1; { "}" } Here at most 8,192 characters; a larger one with: authrim tenant set SLUG --css FILE
console-tenant-css-elsewhere = { $bytes } bytes, set with the CLI or the admin API (too long for this form); kept when you save.
console-tenant-css-remove = Remove its style sheet
console-tenant-logo = Logo
console-tenant-logo-set = { $kind }, { $bytes } bytes.
console-tenant-logo-none = the deployment's.
console-tenant-logo-cli = A logo (an .svg or .png file) is uploaded with: authrim tenant set { $slug } --logo FILE
console-tenant-logo-remove = Remove its logo
console-tenant-password-min = Shortest password (8 to 1024)
console-tenant-mfa = Second factor
console-tenant-mfa-optional = Optional
console-tenant-mfa-required = Required at every sign-in
console-tenant-mfa-passkey = A passkey at every sign-in
console-tenant-signup = Self-registration
console-tenant-on = On
console-tenant-off = Off
console-tenant-mail-from = Mail sender (Name &lt;address&gt;)
console-tenant-api-only = Its own identity providers ({ $upstreams }) and resource servers ({ $resources }) are set with the admin API or authrim tenant set --settings-file.

# Organizations and admin credentials in the console
console-role-org-admin = organization administrator
console-organizations = Organizations
console-org-only-heading = Outside your organizations
console-org-only = Your console access covers the members of the organizations you administer, nothing else.
console-orgs-intro = Customer companies of your applications: their members (with organization roles), e-mail domains and, optionally, an identity provider of their own.
console-orgs-intro-org-admin = The organizations you administer: add and remove their members and set their roles.
console-no-orgs = No organizations yet.
console-org-new = New organization
console-org-slug-help = Its name in URLs and tokens (organization=, org_name): lower-case letters, digits and dashes.
console-org-logo = Logo (https URL, optional)
console-org-domains = E-mail domains
console-org-domains-help = One a line. A user whose verified e-mail address is at one of them becomes a member on their next sign-in: only give domains the company controls.
console-org-upstream = Connection
console-org-upstream-none = None (the tenant's sign-in)
console-org-upstream-help = The identity provider its members sign in with: a sign-in for the organization goes straight there.
console-org-heading = Organization { $org }
console-org-settings = Settings
console-org-settings-tenant = The domains and the connection are set by the tenant's administrators.
console-org-members = Members
console-org-roles-help = Roles are separated by spaces; applications receive them in the org_roles claim. The role admin makes the member an administrator of this organization in the console.
console-org-joined = Joined
console-org-roles-of = Roles of { $user }
console-org-remove-named = Remove { $user }
console-org-no-members = No members yet.
console-org-add-member = Add a member
console-org-member-user = Username or e-mail address (exactly)
console-org-member-roles-help = Optional, separated by spaces. Adding someone who is already a member sets their roles.
console-org-add = Add
console-org-delete = Delete the organization and its memberships
console-org-confirm-wrong = The slug typed does not match: nothing was deleted.
console-org-self = You cannot remove yourself or your own admin role; ask another administrator.
console-back-organization = Back to the organization
console-back-organizations = Back to organizations
console-none = None.
console-done-revoked = Revoked.
console-credentials = Admin credentials
console-credentials-intro = Tokens for this tenant's admin API (scripts, deployments). Each works at this tenant only; revoke one and it is refused at once.
console-no-credentials = No credentials yet.
console-credential-expires = Expires
console-credential-never = never
console-credential-active = active
console-credential-expired = expired
console-credential-revoked = revoked
console-credential-revoke = Revoke
console-credential-revoke-named = Revoke { $name }
console-credential-new = New credential
console-credential-name-help = Who or what holds it (shown in lists and in the audit log).
console-credential-days = Valid for (days; empty: until revoked)
console-credential-scope = What it opens
console-credential-scope-admin = The admin API
console-credential-scope-admin-hint = This tenant's whole admin API: clients, users, groups, settings.
console-credential-scope-scim = Provisioning (SCIM)
console-credential-scope-scim-hint = Only this tenant's SCIM service, for an HR system, Entra ID or Okta; refused by the admin API.
console-credential-created = Credential created
console-credential-once = Copy the token now: it is shown only once and cannot be read again.
console-credential-token = Token
console-organization = Organization
login-password-organization = Leave the password empty if your organization signs you in: your work address takes you there.
err-password-missing = Please enter your password.
# Organizations: invitations by e-mail, and the choice of one at sign-in
org-invitation-title = Invitation to an organization
org-invitation-heading = Join { $organization }
org-invitation-roles = Your roles in it:
org-invitation-accept = Accept the invitation
org-invitation-wrong-user = You are signed in as { $user }, whose verified e-mail address is not the one this invitation was sent to. Sign in with the account of that address (its address must be verified).
org-invitation-switch = Sign in with another account
org-invitation-accepted = You are now a member of { $organization }.
err-invitation-unknown = This invitation link does not work. Check that it was copied whole, or ask for a new invitation.
err-invitation-used = This invitation was already accepted.
err-invitation-revoked = This invitation was withdrawn. Ask the organization for a new one.
err-invitation-expired = This invitation has expired. Ask the organization for a new one.
err-invitation-form-expired = This page expired. Open the invitation link again.
err-invitation-not-signed-in = The sign-in did not complete. Open the invitation link again.
mail-org-invitation-subject = You are invited to join an organization on { $product }
mail-org-invitation-body = You are invited to join { $organization } on { $product }. To accept, open this link within { $days } days and sign in (or create an account) with this e-mail address:

    { $link }

    If you did not expect this invitation, ignore this message.
org-choose-heading = Choose an organization
err-org-choose = Choose one of the organizations offered.
console-organization-required = Require an organization (members only; a member of several chooses one)
# Groups and roles in the console (issue 32)
console-groups = Groups
console-groups-intro = Groups of the tenant's users, which can contain other groups. Applications receive a user's groups in tokens if the client asks for them (its groups claim), and the roles a client defines can be given to a group: every member, directly or through a contained group, holds them.
console-search-groups = Find by name, external id or id
console-no-groups = No groups yet.
console-group = Group
console-group-heading = Group { $group }
console-group-new = New group
console-group-name-help = Unique in the tenant (whatever the case); applications that take group names receive it.
console-group-external-id = External id
console-group-external-id-help = Optional: the identifier a provisioning system (SCIM) knows the group by.
console-group-direct-members = Direct members
console-group-parents = Member of
console-group-members = Members
console-group-members-help = Users and groups directly in this group; the members of a contained group are members too.
console-col-kind = Kind
console-kind-users = User
console-kind-groups = Group
console-principal-name = Username or e-mail address, or group name (exactly)
console-group-delete = Delete the group, its memberships and its roles
console-group-confirm-wrong = The name typed does not match: nothing was deleted.
console-back-group = Back to the group
console-back-groups = Back to groups
console-roles = Roles
console-roles-help = The roles this application defines, given to users or to groups (then to all their members). Tokens for this application carry the user's roles in the roles claim.
console-no-roles = No roles yet.
console-role-nobody = Nobody holds this role yet.
console-member-from-directory = (from the directory { $directory })
console-done-queued = Queued: the changes are on their way.
console-provisioning = Provisioning (SCIM)
console-provisioning-help = Keep this application's own users in step: Authrim creates, updates, deactivates and deletes them in the application's SCIM service as they change here.
console-provisioning-none = This application is not provisioned.
console-provisioning-set = Provision this application
console-provisioning-change = Change provisioning
console-provisioning-endpoint = SCIM endpoint
console-provisioning-token = Credential (bearer token)
console-provisioning-token-help = Given by the application. Never shown again; leave empty to keep the one set.
console-provisioning-users = Users sent
console-provisioning-users-assigned = Those holding one of its roles
console-provisioning-users-all = Every user
console-provisioning-enabled = Enabled
console-provisioning-paused = (paused)
console-provisioning-held = There now
console-provisioning-counts = { $provisioned } users; { $pending } changes waiting
console-provisioning-last-delivered = Last delivery
console-provisioning-last-error = Last failure
console-provisioning-never = never
console-provisioning-resync = Resync
console-provisioning-resync-help = Resync sends every user again and deactivates those no longer assigned: after fixing the credential, or data changed in the application.
console-provisioning-remove = Stop provisioning
console-role-assign = Give { $role } to
console-role-assign-button = Give the role
console-role-unassign-named = Remove { $name } from { $role }
console-group-remove-named = Remove { $name } from the group
console-role-remove = Remove the role { $role } and its assignments
console-role-new = New role
console-role-name = Role
console-role-name-help = Up to 64 letters, digits and _ . : - (an existing role's description is changed).
console-role-description = Description (optional)
console-role-define = Define the role
console-groups-claim = Groups and roles in tokens
console-groups-claim-hint = Which of a user's groups this application receives, and under which claim names.
console-groups-claim-value = Groups claim
console-groups-claim-none = None
console-groups-claim-names = Group names
console-groups-claim-ids = Group ids
console-groups-assigned-only = Only groups that hold one of this application's roles
console-groups-prefixes = Only groups whose name begins with
console-groups-prefixes-hint = One a line (whatever the case); empty: every group.
console-groups-claim-name = Name of the groups claim
console-roles-claim-name = Name of the roles claim
console-claim-names-hint = In ID tokens and userinfo; empty: groups and roles.
console-user-groups = Groups
console-user-groups-direct = Directly in
console-user-groups-effective = All (through contained groups too)
console-user-roles = Roles by application
console-type-saml = SAML application
console-type-saml-hint = An application that speaks only SAML 2.0: registered from its metadata; Authrim is its identity provider.
console-saml-new = New SAML application
console-saml-settings = SAML settings
console-saml-entity = Entity ID: { $entity }
console-saml-acs = Where responses go:
console-saml-metadata = The application's SAML metadata (XML)
console-saml-metadata-hint = Paste its EntityDescriptor. Its entity ID, assertion consumer services (HTTP-POST), logout address and certificates are taken from it. Authrim's own metadata is at /saml/metadata.
console-saml-metadata-missing = Paste the application's SAML metadata.
console-saml-name-id = NameID
console-saml-attributes = Attributes
console-saml-attributes-hint = One per line: attribute name=claim, as mail=email. Claims: { $claims }.
console-saml-attributes-bad = Write each attribute as name=claim, one per line.
console-saml-signing = Signing and encryption
console-saml-sign-response = Sign the response as well as the assertion
console-saml-require-signed = Refuse requests that are not signed
console-saml-encrypt = Encrypt assertions (needs an encryption certificate in the metadata)
console-saml-idp-initiated = List it on the start page, to be signed into from there
console-saml-relay-state = Where in the application to land when started from here (RelayState)
console-saml-consent = Ask users to consent before their attributes are first sent
