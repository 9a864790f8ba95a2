// WebAuthn ceremonies of the hosted pages (ui/webauthn.templ). Each
// element with data-webauthn is one ceremony: the script asks its
// data-options endpoint for options, calls the browser's WebAuthn API, and
// posts the answer as a form, so the server answers with a page as it
// does for passwords. Without WebAuthn (or without this script) the
// controls stay hidden and the pages work as they do without it.
(() => {
  'use strict';
  if (!window.PublicKeyCredential || !navigator.credentials) {
    return;
  }

  // The server's options and answers carry binary members in base64url.
  const toBuffer = (s) => {
    const b64 = s.replace(/-/g, '+').replace(/_/g, '/') + '==='.slice((s.length + 3) % 4);
    const bin = atob(b64);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) {
      out[i] = bin.charCodeAt(i);
    }
    return out.buffer;
  };
  const toBase64URL = (buf) => {
    let bin = '';
    for (const b of new Uint8Array(buf)) {
      bin += String.fromCharCode(b);
    }
    return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  };

  const creationOptions = (pk) => {
    pk.challenge = toBuffer(pk.challenge);
    pk.user.id = toBuffer(pk.user.id);
    for (const c of pk.excludeCredentials || []) {
      c.id = toBuffer(c.id);
    }
    return pk;
  };
  const requestOptions = (pk) => {
    pk.challenge = toBuffer(pk.challenge);
    for (const c of pk.allowCredentials || []) {
      c.id = toBuffer(c.id);
    }
    return pk;
  };

  // credentialJSON is a PublicKeyCredential as the server reads it.
  const credentialJSON = (cred) => {
    const r = cred.response;
    const out = {
      id: cred.id,
      rawId: toBase64URL(cred.rawId),
      type: cred.type,
      clientExtensionResults: cred.getClientExtensionResults ? cred.getClientExtensionResults() : {},
      response: { clientDataJSON: toBase64URL(r.clientDataJSON) },
    };
    if (cred.authenticatorAttachment) {
      out.authenticatorAttachment = cred.authenticatorAttachment;
    }
    if (r.attestationObject) {
      out.response.attestationObject = toBase64URL(r.attestationObject);
      if (r.getTransports) {
        out.response.transports = r.getTransports();
      }
    } else {
      out.response.authenticatorData = toBase64URL(r.authenticatorData);
      out.response.signature = toBase64URL(r.signature);
      if (r.userHandle && r.userHandle.byteLength > 0) {
        out.response.userHandle = toBase64URL(r.userHandle);
      }
    }
    return JSON.stringify(out);
  };

  const fetchOptions = async (url, body, csrf) => {
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json' };
    if (csrf) {
      headers['X-CSRF-Token'] = csrf;
    }
    const res = await fetch(url, {
      method: 'POST', credentials: 'same-origin', headers, body: JSON.stringify(body),
    });
    if (!res.ok) {
      throw new Error('options: ' + res.status);
    }
    return res.json();
  };

  const hidden = (input, name, value) => {
    input.appendChild(Object.assign(document.createElement('input'), { type: 'hidden', name, value }));
  };

  // run drives one ceremony of el, showing its error message on failure.
  const run = async (el, ceremony) => {
    const error = el.querySelector('[data-webauthn-error]');
    const buttons = el.querySelectorAll('button');
    if (error) {
      error.hidden = true;
    }
    buttons.forEach((b) => { b.disabled = true; });
    try {
      await ceremony();
    } catch (e) {
      buttons.forEach((b) => { b.disabled = false; });
      if (error) {
        error.textContent = el.dataset.error;
        error.hidden = false;
      }
    }
  };

  // A passkey sign-in from the login page: the login form's request,
  // CSRF token and "remember me" go with the assertion. A username typed
  // already narrows the keys offered to that user's.
  const passkey = (el) => {
    const login = document.querySelector('input[name="authRequestID"]').form;
    el.querySelector('[data-webauthn-start]').addEventListener('click', () => run(el, async () => {
      const username = login.elements.username ? login.elements.username.value.trim() : '';
      const opts = await fetchOptions(el.dataset.options, username ? { username } : {});
      const cred = await navigator.credentials.get({ publicKey: requestOptions(opts.publicKey) });
      const form = Object.assign(document.createElement('form'), { method: 'post', action: el.dataset.action });
      form.hidden = true;
      hidden(form, 'authRequestID', login.elements.authRequestID.value);
      hidden(form, 'csrf', login.elements.csrf.value);
      if (login.elements.rememberMe && login.elements.rememberMe.checked) {
        hidden(form, 'rememberMe', 'true');
      }
      hidden(form, 'ceremonyId', opts.ceremonyId);
      hidden(form, 'credential', credentialJSON(cred));
      document.body.appendChild(form);
      form.submit();
    }));
  };

  // A form whose submission runs a ceremony first: the second step of a
  // sign-in or a flow's passkey or security key (authenticate), or a
  // registration (register).
  const ceremonyForm = (form, kind) => {
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      run(form, async () => {
        const f = form.elements;
        const body = f.authRequestID ? { authRequestID: f.authRequestID.value } : {};
        // A page that brings its ceremony (a sign-in flow's step) needs no
        // options endpoint.
        const opts = form.dataset.publicKey
          ? { ceremonyId: f.ceremonyId.value, publicKey: JSON.parse(form.dataset.publicKey) }
          : await fetchOptions(form.dataset.options, body, kind === 'register' ? f.csrf.value : '');
        const cred = kind === 'register'
          ? await navigator.credentials.create({ publicKey: creationOptions(opts.publicKey) })
          : await navigator.credentials.get({ publicKey: requestOptions(opts.publicKey) });
        f.ceremonyId.value = opts.ceremonyId;
        f.credential.value = credentialJSON(cred);
        form.submit();
      });
    });
  };

  for (const el of document.querySelectorAll('[data-webauthn]')) {
    for (const n of el.querySelectorAll('[data-webauthn-nojs]')) {
      n.hidden = true;
    }
    for (const n of el.querySelectorAll('[data-webauthn-start]')) {
      n.hidden = false;
    }
    el.hidden = false;
    switch (el.dataset.webauthn) {
      case 'passkey':
        passkey(el);
        break;
      case 'authenticate':
      case 'register':
        ceremonyForm(el, el.dataset.webauthn);
        break;
      default:
    }
  }
})();
