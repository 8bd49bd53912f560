(function () {
  'use strict';
  var body = document.body, token = body.getAttribute('data-token');
  var held = {}; // sections not replaced while the person types in them
  var drill = null, drillTimer = null;

  function ago(iso) {
    var s = Math.round((Date.now() - Date.parse(iso)) / 1000);
    if (!(s >= 0)) return 'now';
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.floor(s / 60) + 'm ago';
    if (s < 172800) return Math.floor(s / 3600) + 'h ago';
    return Math.floor(s / 86400) + 'd ago';
  }
  function tick() {
    var ts = document.querySelectorAll('time[data-ago]');
    for (var i = 0; i < ts.length; i++) ts[i].textContent = ago(ts[i].getAttribute('datetime'));
  }
  function typing(el) {
    var a = document.activeElement;
    return a && el.contains(a) && a.tagName === 'INPUT' && a.value !== '';
  }
  function apply(id, html) {
    var el = document.getElementById(id);
    if (!el) return;
    if (typing(el)) { held[id] = html; return; }
    delete held[id];
    el.innerHTML = html;
  }
  document.addEventListener('focusout', function () {
    setTimeout(function () {
      for (var id in held) apply(id, held[id]);
      tick();
    }, 0);
  });
  function conn(text, cls) {
    var c = document.getElementById('conn');
    c.textContent = text;
    c.className = 'conn ' + cls;
  }
  function say(text, ok) {
    var s = document.getElementById('said');
    s.textContent = text;
    s.className = 'said ' + (ok ? 'ok' : 'err');
  }

  var es = new EventSource('/events');
  es.onopen = function () { conn('live', 'live'); };
  es.onerror = function () { conn('reconnecting…', 'lost'); };
  es.onmessage = function (e) {
    var m = JSON.parse(e.data);
    for (var id in m.sections) apply(id, m.sections[id]);
    document.querySelector('main').setAttribute('data-version', m.version);
    conn('live', 'live');
    tick();
    if (drill !== null) {
      clearTimeout(drillTimer);
      drillTimer = setTimeout(function () { show(drill, false); }, 150);
    }
  };

  function show(name, scroll) {
    drill = name;
    var d = document.getElementById('drill');
    fetch('/agent?name=' + encodeURIComponent(name), { credentials: 'same-origin' }).then(function (r) {
      return r.text().then(function (t) {
        if (drill !== name) return;
        if (!r.ok) { say(t, false); return; }
        d.innerHTML = t;
        d.hidden = false;
        tick();
        if (scroll) d.scrollIntoView({ block: 'start' });
      });
    }).catch(function (err) { say(String(err), false); });
    if (location.hash !== '#agent=' + encodeURIComponent(name)) history.replaceState(null, '', '#agent=' + encodeURIComponent(name));
  }
  function close() {
    drill = null;
    var d = document.getElementById('drill');
    d.hidden = true;
    d.innerHTML = '';
    history.replaceState(null, '', location.pathname);
  }

  function act(kind, data) {
    say('…', true);
    fetch('/act/' + kind, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Laserbrain-Token': token },
      body: JSON.stringify(data)
    }).then(function (r) {
      return r.json().then(function (j) { say(j.message || j.error, r.ok); });
    }).catch(function (err) { say(String(err), false); });
  }

  document.addEventListener('click', function (e) {
    var t = e.target.closest('[data-drill]');
    if (t) { show(t.getAttribute('data-drill'), true); return; }
    if (e.target.closest('[data-close]')) { close(); return; }
    var a = e.target.closest('[data-authorize]');
    if (a) act('authorize', { run: a.getAttribute('data-run'), action: a.getAttribute('data-command') });
  });
  document.addEventListener('submit', function (e) {
    var f = e.target.closest('form[data-act]');
    if (!f) return;
    e.preventDefault();
    var data = {};
    for (var i = 0; i < f.attributes.length; i++) {
      var at = f.attributes[i];
      if (at.name.indexOf('data-') === 0 && at.name !== 'data-act') data[at.name.slice(5)] = at.value;
    }
    var els = f.elements;
    for (var j = 0; j < els.length; j++) if (els[j].name) data[els[j].name] = els[j].value;
    var inputs = f.querySelectorAll('input');
    for (var k = 0; k < inputs.length; k++) inputs[k].blur();
    act(f.getAttribute('data-act'), data);
  });

  var m = /^#agent=(.+)$/.exec(location.hash);
  if (m) show(decodeURIComponent(m[1]), true);
  tick();
  setInterval(tick, 1000);
})();
