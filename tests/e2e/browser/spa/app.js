// The application as its developer would write it with oidc-client-ts: one UserManager,
// tokens in localStorage (so every tab of the application shares them), the code flow with
// PKCE, refresh by refresh token. Nothing here coordinates tabs: the library does not.
/* global oidc, SPA */
window.mgr = new oidc.UserManager({
  authority: SPA.authority,
  client_id: SPA.client_id,
  redirect_uri: SPA.redirect_uri,
  scope: SPA.scope,
  userStore: new oidc.WebStorageStateStore({ store: window.localStorage }),
  automaticSilentRenew: false,
});

// What a tab does when it refreshes: the new tokens, or the error, and whether the new access
// token is good at userinfo.
window.refresh = async () => {
  try {
    const user = await window.mgr.signinSilent();
    const info = await fetch(SPA.userinfo, { headers: { Authorization: `Bearer ${user.access_token}` } });
    return { ok: true, refresh_token: user.refresh_token, access_token: user.access_token, userinfo: info.status };
  } catch (e) {
    return { ok: false, error: String(e && (e.error || e.message || e)) };
  }
};

// userinfo with the access token this tab holds now.
window.userinfo = async () => {
  const user = await window.mgr.getUser();
  const info = await fetch(SPA.userinfo, { headers: { Authorization: `Bearer ${user.access_token}` } });
  return info.status;
};

window.ready = (async () => {
  const status = () => document.getElementById('status');
  if (new URLSearchParams(location.search).has('code')) {
    const user = await window.mgr.signinRedirectCallback();
    history.replaceState(null, '', location.pathname);
    return user.profile.sub;
  }
  const user = await window.mgr.getUser();
  await new Promise((r) => (document.readyState === 'loading' ? document.addEventListener('DOMContentLoaded', r) : r()));
  status().textContent = user ? `signed in as ${user.profile.sub}` : 'signed out';
  return user ? user.profile.sub : null;
})();
