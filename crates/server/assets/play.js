// The player's page: the state and map of a managed campaign with its orders as forms, or the
// generated action forms of a resolver campaign; the log kept current by the event stream.
'use strict';

(() => {
  const { el, api } = Adj;
  const body = document.body;
  const campaign = body.dataset.campaign;
  const managed = body.dataset.mode === 'managed';
  const $ = (id) => document.getElementById(id);
  let token = null;
  let me = null;
  let game = null;
  /** What each side may post now, as the server says (`may_post` of the state). */
  let mayPost = {};
  /** The campaign clock (deadlines, a pause) as the state gave it, and when it was read. */
  let clock = null;
  let clockFetched = 0;
  /** While this side deploys: the hexes of its deployment zone. */
  let zone = new Set();
  const deploying = () => game && game.phase === 'deployment' && me && (mayPost[me.side] || []).includes('deploy');
  let chosen = null;
  let reach = [];
  /** Attack: the hexes each unit may attack now, as the server said when asked about it. */
  let targetsOf = {};
  /** Retreat: each retreating unit's path so far, built by taps; the unit the next tap moves on,
   * and its legal retreats as the server gives them. */
  let retreatPaths = {};
  let retreatUnit = null;
  let retreatOptions = [];
  /** The retreating units the server found no legal retreat for: their path is empty. */
  let noRetreat = new Set();
  /** Cavalry option: the hexes the defending cavalry may retreat to before the battle. */
  let cavalryHexes = [];
  const mayNow = (kind) => !!(game && me && (mayPost[me.side] || []).includes(kind));
  const unitName = (id) => {
    const u = game && game.units.find((x) => x.id === id);
    return u ? u.name : id;
  };
  /** What the rules let a unit do now (`GET …/units/{unit}/moves`). */
  const legal = (unit) => api('GET', `/v1/campaigns/${campaign}/units/${encodeURIComponent(unit)}/moves`);

  Adj.signIn(`adjutant.token.${campaign}`, (t, who) => {
    token = t;
    me = who;
    wire();
    refresh();
    listen();
  });

  /** Every order form posts through one path: build the body, post, show the receipt. */
  function wire() {
    wireForms(document);
    if (managed) {
      $('map').addEventListener('click', (event) => {
        const hex = event.target.closest && event.target.closest('[data-hex]');
        if (hex) clickHex(hex.dataset.hex);
      });
      wireZoom();
      $('attack-units').addEventListener('change', () => attackersChanged());
      $('retreat-units').addEventListener('click', (event) => {
        const b = event.target.closest && event.target.closest('button[data-unit]');
        if (b) pickRetreat(b.dataset.unit);
      });
    } else {
      actionForms();
    }
  }

  const words = (text) => text.split(/[\s,]+/).map((w) => w.trim()).filter(Boolean);
  const lines = (text) => text.split('\n').map((l) => words(l)).filter((l) => l.length);

  /**
   * The field a refusal names, in the player's words: the unit a placement, a retreat path or
   * an attacker stands for, by name; nothing for what the page sent on its own (the side).
   */
  function describeField(body, field) {
    const path = field.replace(/^body\.body\./, '').replace(/^body\./, '');
    if (path === 'side' || path === 'kind') return '';
    const item = path.match(/^(placements|paths|units|factors|order)\[(\d+)\]/);
    if (item) {
      const entry = (body[item[1]] || [])[Number(item[2])];
      const id = typeof entry === 'string' ? entry : entry && entry.unit;
      const unit = game && game.units.find((u) => u.id === id);
      if (unit) return unit.name;
      if (id) return String(id);
    }
    if (path === 'unit' && body.unit) {
      const unit = game && game.units.find((u) => u.id === body.unit);
      return unit ? unit.name : String(body.unit);
    }
    return path ? `(${path})` : '';
  }

  /** The post a form stands for. */
  function build(form) {
    const kind = form.dataset.kind;
    switch (kind) {
      case 'deploy':
        return { kind, body: { placements: Array.from(form.querySelectorAll('input[data-unit]'))
          .filter((i) => i.value.trim()).map((i) => ({ unit: i.dataset.unit, hex: i.value.trim() })) } };
      case 'move':
        return { kind, body: { unit: $('move-unit').value, path: words($('move-path').value) } };
      case 'attack':
        return { kind, body: { units: Array.from(form.querySelectorAll('input[type=checkbox]:checked')).map((c) => c.value),
          target: $('attack-target').value.trim() } };
      case 'casualty_order':
        return { kind, body: { order: words($('casualty-order').value) } };
      case 'retreat':
        return { kind, body: { paths: lines($('retreat-paths').value).map(([unit, ...path]) => ({ unit, path })) } };
      case 'cavalry_option': {
        const b = { retreat: $('cavalry-retreat').checked };
        if ($('cavalry-hex').value.trim()) b.hex = $('cavalry-hex').value.trim();
        return { kind, body: b };
      }
      case 'reinforce': {
        const b = { factors: lines($('reinforce-factors').value).map(([unit, f]) => {
          const factors = Number(f);
          if (!Number.isInteger(factors)) throw new Error(`give ${unit} a whole number of factors`);
          return { unit, factors };
        }) };
        const name = $('new-unit-name').value;
        if (name.trim()) {
          const factors = Number($('new-unit-factors').value || '0');
          if (!Number.isInteger(factors)) throw new Error('give the new unit a whole number of factors');
          b.new_units = [{ name, arm: $('new-unit-arm').value, hex: $('new-unit-hex').value.trim(), factors }];
        }
        return { kind, body: b };
      }
      case 'seal':
        return { kind, body: { topic: $('seal-topic').value.trim(), role: $('seal-role').value, choice: $('seal-choice').value } };
      case 'resolve':
        return { kind, body: resolveBody(form) };
      default:
        return { kind, body: {} };
    }
  }

  /** Refreshes overlap when posts come fast: one that a newer refresh overtook draws nothing
   * more, so an older state never replaces a newer one. */
  let refreshes = 0;

  async function refresh() {
    if (managed) {
      const turn = ++refreshes;
      const answer = await api('GET', `/v1/campaigns/${campaign}/state`);
      if (!answer.ok || turn !== refreshes) return;
      game = answer.data.state;
      mayPost = answer.data.may_post || {};
      clock = answer.data.clock || null;
      clockFetched = Date.now();
      zone = new Set(((answer.data.deployment_zones || {})[me && me.side]) || []);
      const changed = body.dataset.after !== String(answer.data.after_seq);
      showTurn();
      showUnits();
      // A new state: what the chosen unit could reach before is asked again (after a move it
      // can reach nothing more), so no highlight outlives the state it was drawn for.
      if (changed) targetsOf = {};
      if (changed && chosen && !deploying()) await choose(chosen);
      if (changed) await attackersChanged();
      if (changed) await showRetreat();
      if (changed) await showCavalryOption();
      if (turn !== refreshes) return;
      // The same state draws the same map: redrawn only when it changed, so a tap is not lost
      // to a map replaced under the finger.
      if (changed || !$('map').querySelector('svg')) await showMap();
      else mark();
      if (turn !== refreshes) return;
      body.dataset.after = String(answer.data.after_seq);
    } else {
      $('turn-line').textContent = 'The referee keeps the table: resolve actions below.';
      body.dataset.after = String(await showSeals());
    }
  }

  /** The deadline line, counted down every second until the next state. */
  function showClock() {
    const line = $('clock-line');
    line.hidden = !clock;
    line.dataset.status = clock ? clock.status : '';
    if (clock) line.textContent = Adj.clockLine(clock, me && me.side, clockFetched);
  }
  setInterval(() => { if (clock) showClock(); }, 1000);

  function showTurn() {
    showClock();
    const side = me && me.side;
    if (game.result) {
      $('turn-line').textContent = `The game is over: ${game.result.condition}`;
    } else if (game.phase === 'deployment') {
      $('turn-line').textContent = deploymentLine(side);
    } else {
      $('turn-line').textContent = turnLine(side);
    }
    // The forms: what this side may post now stands out, the rest is shown as not now.
    const mine = new Set(side ? (mayPost[side] || []) : []);
    for (const form of document.querySelectorAll('form.order')) {
      const kind = form.dataset.kind;
      if (kind === 'deploy') continue;
      form.classList.toggle('not-now', !mine.has(kind));
    }
    // The Rebel reinforcement post first, while it can still be made.
    const rollFirst = mine.has('reinforcement');
    $('roll-first').hidden = !rollFirst;
    if (rollFirst) $('roll-first').append($('form-reinforcement'));
    else if ($('form-reinforcement').parentElement.id === 'roll-first') $('form-resolve_attack').before($('form-reinforcement'));
    const awaited = new Set();
    $('awaiting').replaceChildren(...(game.awaiting || []).map((a) => {
      const mine = a.side === side;
      if (mine) awaited.add(a.kind);
      return el('li', { class: mine ? 'mine' : '' }, mine ? `You: ${a.detail}` : `Waiting for ${Adj.sideName(a.side)}: ${a.detail}`);
    }));
    for (const form of document.querySelectorAll('form.order')) form.classList.toggle('awaited', awaited.has(form.dataset.kind));
    const p = game.reinforcement_points || {};
    $('points').textContent = `Reinforcement points stored: Union ${p.union}, Rebels ${p.confederate}.`;
  }

  /** The kinds a side may post, in words: "reinforce, move, attack or end_turn". */
  function kindsInWords(kinds) {
    if (!kinds.length) return 'nothing';
    return kinds.length === 1 ? kinds[0] : `${kinds.slice(0, -1).join(', ')} or ${kinds[kinds.length - 1]}`;
  }

  /** Who acts now and with what: one line from the server's `may_post`, never two stories. */
  function turnLine(side) {
    const head = `Turn ${game.turn}, ${game.phase} phase`;
    const acting = Object.entries(mayPost).filter(([, kinds]) => kinds.length);
    if (!acting.length) return `${head}: nobody can post now.`;
    const parts = acting.map(([who, kinds]) => (who === side
      ? `you (${Adj.sideName(who)}) may post ${kindsInWords(kinds)}`
      : `${Adj.sideName(who)} may post ${kindsInWords(kinds)}`));
    const waiting = game.battle ? ` Battle ${game.battle.number} at ${game.battle.target} waits for an answer:` : '';
    return `${head}.${waiting} ${parts.join('; ')}.`;
  }

  /** Whether a side has deployed, and whether its deployment is sealed (deployed, yet off the map). */
  const deployedSealed = (side) => (game.deployed || []).includes(side)
    && game.units.filter((u) => u.side === side && !u.eliminated).every((u) => !u.hex);

  /** Deployment: who has deployed, and what stays sealed until both have. */
  function deploymentLine(side) {
    const other = side === 'union' ? 'confederate' : 'union';
    const done = (game.deployed || []);
    if (side && done.includes(side)) {
      return deployedSealed(side)
        ? `Deployment: your units are placed, sealed until ${Adj.sideName(other)} have deployed; then both deployments are shown together.`
        : `Deployment: your units are placed; waiting for ${Adj.sideName(other)}.`;
    }
    if (side && done.includes(other)) {
      return deployedSealed(other)
        ? `Deployment: ${Adj.sideName(other)} have deployed, sealed: you see where once you have deployed too. Place your units.`
        : `Deployment: ${Adj.sideName(other)} have deployed. Place your units.`;
    }
    return 'Deployment: both sides place their units; the first deployment stays sealed until the second is in.';
  }

  const mine = () => (game ? game.units.filter((u) => me && u.side === me.side && !u.eliminated) : []);

  /** Where a unit not on the map stands: sealed, about to be deployed to a hex, or nowhere yet. */
  function placing(u) {
    if (deployedSealed(u.side)) return 'placed, sealed';
    const input = $(`deploy-${u.id}`);
    return input && input.value.trim() ? `to deploy in ${input.value.trim()}` : 'not placed';
  }

  function showUnits() {
    const units = mine();
    $('my-units').replaceChildren(...units.map((u) => el('li', {},
      el('button', { type: 'button', class: `unit${chosen === u.id ? ' chosen' : ''}`, 'data-unit': u.id, 'aria-pressed': chosen === u.id ? 'true' : 'false' },
        `${u.id} · ${u.factors} · ${u.hex || placing(u)}`))));
    for (const b of $('my-units').querySelectorAll('button')) b.addEventListener('click', () => choose(b.dataset.unit));
    const select = $('move-unit');
    const was = select.value;
    select.replaceChildren(...units.filter((u) => u.hex).map((u) => el('option', { value: u.id }, `${u.id} (${u.hex})`)));
    if (was) select.value = was;
    const boxes = $('attack-units');
    const checked = new Set(Array.from(boxes.querySelectorAll('input:checked')).map((c) => c.value));
    boxes.replaceChildren(...units.filter((u) => u.hex).map((u) => el('label', { class: 'check' },
      el('input', { type: 'checkbox', value: u.id, checked: checked.has(u.id), name: 'units' }), ` ${u.id} (${u.hex}, ${u.factors})`)));
    const rows = $('deploy-rows');
    const unplaced = units.filter((u) => !u.hex);
    if (game.phase === 'deployment' && unplaced.length && !rows.childElementCount) {
      rows.replaceChildren(...unplaced.map((u) => el('div', { class: 'row' },
        el('label', { for: `deploy-${u.id}` }, `${u.name} (${u.id}, ${u.factors})`),
        el('input', { id: `deploy-${u.id}`, 'data-unit': u.id, autocomplete: 'off', placeholder: 'hex', size: 5 }))));
    }
    $('form-deploy').hidden = game.phase !== 'deployment' || (game.deployed || []).includes(me && me.side);
  }

  async function choose(unit) {
    chosen = unit;
    if (deploying()) {
      // Deployment: the unit goes where the next click on a highlighted hex says.
      const u = game.units.find((x) => x.id === unit);
      $('destinations').replaceChildren(el('li', {}, `Click a highlighted hex of your deployment zone to place ${u ? u.name : unit}.`));
      showUnits();
      mark();
      return;
    }
    $('move-unit').value = unit;
    const answer = await legal(unit);
    reach = answer.ok ? answer.data.moves : [];
    if (answer.ok) targetsOf[unit] = answer.data.attack_targets || [];
    const targets = answer.ok ? targetsOf[unit] : [];
    const list = $('destinations');
    if (!answer.ok) {
      list.replaceChildren(el('li', {}, answer.detail));
    } else if (!reach.length && !targets.length) {
      list.replaceChildren(el('li', {}, `${unit} cannot move or attack now.`));
    } else {
      list.replaceChildren(
        ...reach.map((m) => el('li', {}, el('button', { type: 'button', class: 'dest', 'data-hex': m.hex },
          `${m.hex} (cost ${m.cost}${m.halts ? ', halts next to the enemy' : ''})`))),
        ...targets.map((hex) => el('li', {}, el('button', { type: 'button', class: 'dest target', 'data-hex': hex },
          `Attack ${hex}`))));
      for (const b of list.querySelectorAll('button')) b.addEventListener('click', () => clickHex(b.dataset.hex));
    }
    showUnits();
    mark();
  }

  /** The attackers ticked in the attack form: the hexes every one of them may attack. */
  const checkedAttackers = () => Array.from($('attack-units').querySelectorAll('input:checked')).map((c) => c.value);
  function shownTargets() {
    const attackers = checkedAttackers();
    if (!attackers.length) return chosen && targetsOf[chosen] ? targetsOf[chosen] : [];
    return attackers.map((id) => targetsOf[id] || []).reduce((a, b) => a.filter((hex) => b.includes(hex)));
  }

  /** Asks the server what each ticked attacker may attack, then marks the common targets. */
  async function attackersChanged() {
    for (const id of checkedAttackers()) {
      if (targetsOf[id]) continue;
      const answer = await legal(id);
      targetsOf[id] = answer.ok ? answer.data.attack_targets || [] : [];
    }
    const hint = $('attack-hint');
    const targets = shownTargets();
    if (checkedAttackers().length) {
      hint.textContent = targets.length
        ? `They may attack ${targets.join(', ')}: tap a highlighted hex on the map.`
        : 'These units have no enemy next to all of them that they may attack now.';
    } else {
      hint.textContent = 'Tick the attacking units; the hexes they may attack are highlighted on the map.';
    }
    mark();
  }

  /** The retreat form while this side retreats: its units, each path built by tapping hexes. */
  async function showRetreat() {
    const box = $('retreat-units');
    if (!mayNow('retreat') || !game.battle) {
      retreatPaths = {};
      retreatUnit = null;
      retreatOptions = [];
      noRetreat = new Set();
      box.replaceChildren();
      return;
    }
    const units = game.battle.retreating || [];
    for (const id of Object.keys(retreatPaths)) if (!units.includes(id)) delete retreatPaths[id];
    if (!retreatUnit || !units.includes(retreatUnit)) await nextRetreat();
    drawRetreat();
  }

  /** On to the next retreating unit that still needs a path (one without a legal retreat needs
   * none); none left: the retreat is ready to send. */
  async function nextRetreat() {
    for (const id of (game.battle && game.battle.retreating) || []) {
      if ((retreatPaths[id] || []).length || noRetreat.has(id)) continue;
      await pickRetreat(id);
      if (retreatOptions.length) return;
    }
    retreatUnit = null;
    retreatOptions = [];
    writeRetreat();
    retreatGuide();
  }

  function drawRetreat() {
    const units = (game && game.battle && game.battle.retreating) || [];
    $('retreat-units').replaceChildren(...units.map((id) => {
      const path = retreatPaths[id] || [];
      const said = path.length ? `through ${path.join(' ')}`
        : noRetreat.has(id) ? 'no legal retreat: eliminated'
          : retreatUnit === id ? 'tap its first hex on the map' : 'no path yet';
      return el('button', { type: 'button', class: `unit${retreatUnit === id ? ' chosen' : ''}`, 'data-unit': id,
        'aria-pressed': retreatUnit === id ? 'true' : 'false' }, `${unitName(id)}: ${said}`);
    }));
  }

  /** The hexes the retreating unit may go on to from the path it has so far. */
  function retreatSteps() {
    const so = retreatPaths[retreatUnit] || [];
    const steps = new Set();
    for (const r of retreatOptions) {
      if (r.path.length > so.length && so.every((hex, i) => r.path[i] === hex)) steps.add(r.path[so.length]);
    }
    return Array.from(steps).sort();
  }

  /** Starts (again) the path of a retreating unit: its legal retreats come from the server. */
  async function pickRetreat(unit) {
    retreatUnit = unit;
    retreatPaths[unit] = [];
    const answer = await legal(unit);
    retreatOptions = answer.ok ? answer.data.retreats || [] : [];
    if (answer.ok && !retreatOptions.length) noRetreat.add(unit);
    writeRetreat();
    retreatGuide();
  }

  /**
   * The typed retreat field follows the paths tapped, so the form posts what the map shows: a
   * unit with no hex tapped yet is left out (the server then asks for it) rather than sent with
   * an empty path, which would stand for no legal retreat.
   */
  function writeRetreat() {
    const units = (game && game.battle && game.battle.retreating) || [];
    $('retreat-paths').value = units.filter((id) => (retreatPaths[id] || []).length || noRetreat.has(id))
      .map((id) => [id, ...retreatPaths[id]].join(' ')).join('\n');
    drawRetreat();
  }

  /** Says what the next tap does while a retreat is built, with the steps as buttons too. */
  function retreatGuide() {
    const list = $('destinations');
    const steps = retreatUnit ? retreatSteps() : [];
    const so = retreatUnit ? retreatPaths[retreatUnit] : [];
    if (retreatUnit && !retreatOptions.length) {
      list.replaceChildren(el('li', {}, `${unitName(retreatUnit)} has no legal retreat: it is eliminated.`));
    } else if (retreatUnit && steps.length) {
      const ends = (hex) => retreatOptions.find((r) => r.path.length === so.length + 1 && r.path[so.length] === hex
        && so.every((h, i) => r.path[i] === h));
      const whole = so.length && retreatOptions.some((r) => r.path.join(' ') === so.join(' '));
      const said = !so.length ? `Tap a highlighted hex: where ${unitName(retreatUnit)} retreats first.`
        : whole ? `${unitName(retreatUnit)} retreats to ${so.join(' ')}: tap a second hex, or leave it there.`
          : `${unitName(retreatUnit)} retreats through ${so.join(' ')} and has no room there: tap a second hex.`;
      list.replaceChildren(el('li', {}, said),
      ...steps.map((hex) => {
        const end = ends(hex);
        const note = end && end.next_to_enemy ? `, next to the enemy in ${end.next_to_enemy}: loses half its factors` : '';
        return el('li', {}, el('button', { type: 'button', class: 'dest', 'data-hex': hex }, `Retreat to ${hex}${note}`));
      }));
      for (const b of list.querySelectorAll('button')) b.addEventListener('click', () => clickHex(b.dataset.hex));
    } else {
      list.replaceChildren(el('li', {}, 'Every retreating unit has its path: check them and press Retreat.'));
    }
    mark();
  }

  /** The retreat tap: one more hex on the path; a finished path moves on to the next unit. */
  async function retreatTo(hex) {
    retreatPaths[retreatUnit].push(hex);
    writeRetreat();
    if (retreatSteps().length) {
      retreatGuide();
      return;
    }
    await nextRetreat();
    // Every path built: the Retreat button is next.
    if (!retreatUnit) $('form-retreat').querySelector('button[type=submit]').focus();
  }

  /** The cavalry option: where the defending cavalry may retreat before the battle. */
  async function showCavalryOption() {
    cavalryHexes = [];
    const cavalry = mayNow('cavalry_option') && game.battle ? game.battle.cavalry || [] : [];
    if (cavalry.length) {
      const answer = await legal(cavalry[0]);
      cavalryHexes = answer.ok ? answer.data.cavalry_hexes || [] : [];
    }
    $('cavalry-hint').textContent = cavalry.length
      ? (cavalryHexes.length ? `The cavalry may retreat to ${cavalryHexes.join(', ')}: tap a highlighted hex on the map.` : 'The cavalry have no hex to retreat to.')
      : '';
  }

  function clickHex(hex) {
    if (deploying() && !chosen && zone.has(hex)) {
      // The first tap in the zone places the first unit not placed yet.
      const first = Array.from(document.querySelectorAll('#deploy-rows input[data-unit]')).find((i) => !i.value.trim());
      if (first) chosen = first.dataset.unit;
    }
    if (deploying() && chosen) {
      if (!zone.has(hex)) {
        $('destinations').replaceChildren(el('li', {}, `${hex} is not in your deployment zone: choose a highlighted hex.`));
        return;
      }
      const input = $(`deploy-${chosen}`);
      if (input) input.value = hex;
      // On to the next unit not placed yet.
      const next = Array.from(document.querySelectorAll('#deploy-rows input[data-unit]')).find((i) => !i.value.trim());
      if (next) choose(next.dataset.unit);
      else {
        chosen = null;
        $('destinations').replaceChildren(el('li', {}, 'Every unit is placed: check the list and press Deploy.'));
        showUnits();
        mark();
      }
      return;
    }
    if (retreatUnit && retreatSteps().includes(hex)) {
      retreatTo(hex);
      return;
    }
    if (mayNow('retreat') && game.battle) {
      // A tap on the retreating units' hex chooses them in turn, as the buttons do.
      const there = (game.battle.retreating || []).filter((id) => (game.units.find((u) => u.id === id) || {}).hex === hex);
      if (there.length) {
        pickRetreat(there[(there.indexOf(retreatUnit) + 1) % there.length]);
        return;
      }
    }
    if (cavalryHexes.includes(hex)) {
      $('cavalry-retreat').checked = true;
      $('cavalry-hex').value = hex;
      $('cavalry-hint').textContent = `The cavalry retreat to ${hex}: press the button to answer.`;
      $('form-cavalry_option').querySelector('button').focus();
      return;
    }
    if (shownTargets().includes(hex)) {
      // A target tapped with no attacker ticked: the chosen unit attacks.
      if (!checkedAttackers().length && chosen) {
        const box = $('attack-units').querySelector(`input[value="${CSS.escape(chosen)}"]`);
        if (box) box.checked = true;
      }
      $('attack-target').value = hex;
      $('attack-hint').textContent = `${checkedAttackers().map(unitName).join(', ')} attack ${hex}: press Attack, or tick more units next to it.`;
      mark();
      $('form-attack').querySelector('button').focus();
      return;
    }
    const move = reach.find((m) => m.hex === hex);
    if (chosen && move) {
      $('move-unit').value = chosen;
      $('move-path').value = move.path.join(' ');
      $('form-move').querySelector('button').focus();
      return;
    }
    // A hex of the player's own: its units are chosen in turn, tap after tap.
    const here = mine().filter((u) => u.hex === hex);
    if (here.length) {
      const at = here.findIndex((u) => u.id === chosen);
      choose(here[(at + 1) % here.length].id);
    }
  }

  /** Marks on the map what a tap may choose now: the chosen unit's destinations, the hexes the
   * attackers may attack, the deployment zone, the next steps of a retreat (and the path so far),
   * the cavalry's hexes; and where the chosen unit stands. */
  function mark() {
    const hexes = new Set(reach.map((m) => m.hex));
    const zoneShown = deploying();
    const targets = new Set(shownTargets());
    const steps = new Set(retreatUnit ? retreatSteps() : []);
    for (const hex of cavalryHexes) steps.add(hex);
    const path = new Set(retreatUnit ? retreatPaths[retreatUnit] || [] : []);
    const at = chosen && game && (game.units.find((u) => u.id === chosen) || {}).hex;
    for (const poly of $('map').querySelectorAll('[data-hex]')) {
      const hex = poly.dataset.hex;
      poly.classList.toggle('reach', hexes.has(hex));
      poly.classList.toggle('zone', zoneShown && zone.has(hex));
      poly.classList.toggle('target', targets.has(hex));
      poly.classList.toggle('retreat-step', steps.has(hex));
      poly.classList.toggle('retreat-path', path.has(hex));
      poly.classList.toggle('here', hex === at);
    }
  }

  /** The server's own map, inline so its hexes can be clicked. */
  async function showMap() {
    const response = await fetch(`/v1/campaigns/${campaign}/map.svg`);
    if (!response.ok) return;
    const doc = new DOMParser().parseFromString(await response.text(), 'image/svg+xml');
    const svg = doc.documentElement;
    if (svg.nodeName !== 'svg') return;
    // Each hex's polygon is followed, in the terrain group, by the text naming it.
    let polygon = null;
    const terrain = svg.querySelector('#terrain');
    for (const node of terrain ? Array.from(terrain.children) : []) {
      if (node.nodeName === 'polygon') polygon = node;
      else if (node.nodeName === 'text' && polygon) {
        polygon.setAttribute('data-hex', node.textContent.trim());
        polygon = null;
      }
    }
    const box = (svg.getAttribute('viewBox') || '').split(/\s+/).map(Number);
    if (box.length === 4 && box[2] > 0 && box[3] > 0) {
      $('map').style.aspectRatio = `${box[2]} / ${box[3]}`;
      // The part of the map shown stays across redraws, unless the map itself changed size.
      const drawn = { x: box[0], y: box[1], w: box[2], h: box[3] };
      if (!whole || ['x', 'y', 'w', 'h'].some((k) => whole[k] !== drawn[k])) {
        whole = drawn;
        view = Object.assign({}, drawn);
      }
    }
    svg.removeAttribute('width');
    svg.removeAttribute('height');
    svg.setAttribute('role', 'img');
    svg.setAttribute('aria-label', 'Map of the campaign');
    $('map').replaceChildren(document.importNode(svg, true));
    showView();
    mark();
  }

  // ---- the map's zoom and pan: the SVG's viewBox is the part of the map shown ----------------

  /** The whole map (the SVG's own viewBox) and the part of it shown, in map units. */
  let whole = null;
  let view = null;
  const MAX_ZOOM = 8;
  const ZOOM_STEP = 2;
  const zoomOf = () => (whole && view ? whole.w / view.w : 1);

  function showView() {
    const svg = $('map').querySelector('svg');
    if (!svg || !view) return;
    svg.setAttribute('viewBox', `${view.x} ${view.y} ${view.w} ${view.h}`);
    const z = zoomOf();
    $('map').dataset.zoom = z.toFixed(2);
    $('map-zoom-level').textContent = z > 1.001 ? `Zoom ×${z.toFixed(1)}` : 'Whole map';
  }

  /** A view kept inside the map, between the whole map and `MAX_ZOOM` times closer. */
  function within(v) {
    const w = Math.min(whole.w, Math.max(whole.w / MAX_ZOOM, v.w));
    const h = w * whole.h / whole.w;
    return {
      x: Math.min(whole.x + whole.w - w, Math.max(whole.x, v.x)),
      y: Math.min(whole.y + whole.h - h, Math.max(whole.y, v.y)),
      w,
      h,
    };
  }

  /** Zooms by `factor`, the map point (px, py) (by default the middle) staying where it is. */
  function zoomBy(factor, px, py) {
    if (!view) return;
    const x = px === undefined ? view.x + view.w / 2 : px;
    const y = py === undefined ? view.y + view.h / 2 : py;
    const w = Math.min(whole.w, Math.max(whole.w / MAX_ZOOM, view.w / factor));
    const k = w / view.w;
    view = within({ x: x - (x - view.x) * k, y: y - (y - view.y) * k, w, h: view.h * k });
    showView();
  }

  function panBy(dx, dy) {
    if (!view) return;
    view = within({ x: view.x + dx, y: view.y + dy, w: view.w, h: view.h });
    showView();
  }

  function wholeMap() {
    if (!whole) return;
    view = Object.assign({}, whole);
    showView();
  }

  /** Map units per screen pixel, and a point of the screen as a point of the map. */
  function scale() {
    const svg = $('map').querySelector('svg');
    const r = svg ? svg.getBoundingClientRect() : null;
    return r && r.width ? { r, k: view.w / r.width } : null;
  }
  function mapPoint(clientX, clientY) {
    const s = scale();
    return s ? { x: view.x + (clientX - s.r.left) * s.k, y: view.y + (clientY - s.r.top) * s.k } : null;
  }

  /**
   * Buttons, keys (+ − arrows 0), a pinch or a ctrl-wheel zoom; a drag pans. A tap stays a tap:
   * a drag or a pinch swallows the click that ends it, so it chooses no hex.
   */
  function wireZoom() {
    const map = $('map');
    $('map-zoom-in').addEventListener('click', () => zoomBy(ZOOM_STEP));
    $('map-zoom-out').addEventListener('click', () => zoomBy(1 / ZOOM_STEP));
    $('map-whole').addEventListener('click', wholeMap);
    map.addEventListener('keydown', (event) => {
      const s = view && scale();
      const step = s ? Math.max(view.w, view.h) / 5 : 0;
      const keys = {
        '+': () => zoomBy(ZOOM_STEP), '=': () => zoomBy(ZOOM_STEP),
        '-': () => zoomBy(1 / ZOOM_STEP), '_': () => zoomBy(1 / ZOOM_STEP), '−': () => zoomBy(1 / ZOOM_STEP),
        '0': wholeMap,
        ArrowLeft: () => panBy(-step, 0), ArrowRight: () => panBy(step, 0),
        ArrowUp: () => panBy(0, -step), ArrowDown: () => panBy(0, step),
      };
      const act = keys[event.key];
      if (!act || event.altKey || event.ctrlKey || event.metaKey) return;
      event.preventDefault();
      act();
    });
    map.addEventListener('wheel', (event) => {
      // A trackpad's pinch comes as a wheel with ctrl; a plain wheel scrolls the page.
      if (!event.ctrlKey || !view) return;
      event.preventDefault();
      const p = mapPoint(event.clientX, event.clientY);
      if (p) zoomBy(Math.exp(-event.deltaY / 200), p.x, p.y);
    }, { passive: false });

    const pointers = new Map();
    let travelled = 0;
    let gesture = false;
    let swallow = false;
    const SLOP = 8;
    map.addEventListener('pointerdown', (event) => {
      if (event.pointerType === 'mouse' && event.button !== 0) return;
      // The first finger down starts a new gesture, whatever an earlier one left behind (a
      // finger lifted over a hex the map redrew is never seen going up).
      if (event.isPrimary) pointers.clear();
      if (!pointers.size) {
        travelled = 0;
        gesture = false;
        swallow = false;
      }
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 2) {
        // Two fingers: a pinch, which no tap ends.
        gesture = true;
        for (const id of pointers.keys()) if (map.hasPointerCapture && !map.hasPointerCapture(id)) map.setPointerCapture(id);
      }
    });
    map.addEventListener('pointermove', (event) => {
      const p = pointers.get(event.pointerId);
      if (!p || !view) return;
      const s = scale();
      if (!s) return;
      if (pointers.size >= 2) {
        const [a, b] = Array.from(pointers.values());
        const d0 = Math.hypot(a.x - b.x, a.y - b.y);
        const m0 = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
        const fixed = mapPoint(m0.x, m0.y);
        p.x = event.clientX;
        p.y = event.clientY;
        const d1 = Math.hypot(a.x - b.x, a.y - b.y);
        const m1 = { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 };
        if (d0 > 0 && d1 > 0) zoomBy(d1 / d0, fixed.x, fixed.y);
        const after = scale();
        if (after) panBy(-(m1.x - m0.x) * after.k, -(m1.y - m0.y) * after.k);
        return;
      }
      const dx = event.clientX - p.x;
      const dy = event.clientY - p.y;
      if (!gesture) {
        travelled = Math.hypot(dx, dy);
        if (travelled < SLOP) return;
        gesture = true;
        map.setPointerCapture(event.pointerId);
      }
      p.x = event.clientX;
      p.y = event.clientY;
      panBy(-dx * s.k, -dy * s.k);
    });
    const lift = (event) => {
      if (!pointers.delete(event.pointerId)) return;
      if (gesture) swallow = true;
    };
    map.addEventListener('pointerup', lift);
    map.addEventListener('pointercancel', lift);
    map.addEventListener('click', (event) => {
      if (!swallow) return;
      swallow = false;
      event.stopPropagation();
      event.preventDefault();
    }, true);
  }

  /** One form per action of the ruleset, from its input schema, the example filled in. */
  async function actionForms() {
    const answer = await api('GET', `/v1/rulesets/${encodeURIComponent(body.dataset.ruleset)}`);
    if (!answer.ok) {
      $('action-forms').replaceChildren(el('p', {}, answer.detail));
      return;
    }
    $('action-forms').replaceChildren(...answer.data.actions.map((action) => {
      const form = el('form', { class: 'order', 'data-kind': 'resolve', 'data-action': action.name, id: `action-${action.name}` },
        el('fieldset', {}, el('legend', {}, action.name),
          el('p', { class: 'hint' }, `${action.summary} (${action.rule})`),
          fields(action.input_schema, action.example, `in-${action.name}`, []),
          el('label', { for: `sealed-${action.name}` }, 'Sealed choices to reveal (topic, optional)'),
          el('input', { id: `sealed-${action.name}`, 'data-sealed': '1', autocomplete: 'off' }),
          el('button', { type: 'submit' }, `Resolve ${action.name}`),
          el('p', { class: 'refusal', role: 'alert' })));
      return form;
    }));
    wireForms($('action-forms'));
  }

  function wireForms(root) {
    for (const form of root.querySelectorAll('form.order')) {
      form.addEventListener('submit', async (event) => {
        event.preventDefault();
        let built;
        try {
          built = build(form);
        } catch (e) {
          form.querySelector('.refusal').textContent = `Not sent: ${e.message}`;
          return;
        }
        // A move or an attack ends the reinforcement step: ask before the roll is lost.
        const side = me && me.side;
        const rollPending = side && (mayPost[side] || []).includes('reinforcement');
        if (rollPending && ['move', 'attack'].includes(built.kind)
          && !confirm('You have not made your reinforcement post this turn. Once a unit moves or attacks, the roll is lost for this turn. Go on anyway?')) {
          return;
        }
        const answer = await Adj.post(form, campaign, token, built.kind, built.body, (field) => describeField(built.body, field));
        if (answer && answer.ok) {
          showReceipt(answer.data);
          form.reset();
          refresh();
        }
      });
    }
  }

  /** Inputs for a JSON schema: objects as fieldsets, enums as choices, numbers, text, yes/no. */
  /** A schema as the form needs it: references followed, `const` and one-of-strings as enums, null left out. */
  function plain(schema, root) {
    schema = schema || {};
    if (schema.$ref && schema.$ref.startsWith('#/')) {
      let at = root;
      for (const key of schema.$ref.slice(2).split('/')) at = at && at[key];
      return Object.assign({}, plain(at, root), { description: schema.description || (at && at.description) });
    }
    if ('const' in schema) return Object.assign({}, schema, { enum: [schema.const], type: typeof schema.const });
    const branches = schema.anyOf || schema.oneOf;
    if (Array.isArray(branches)) {
      const kept = branches.map((b) => plain(b, root)).filter((b) => b.type !== 'null');
      const described = (s) => Object.assign({}, s, { description: schema.description || s.description });
      if (kept.length === 1) return described(kept[0]);
      if (kept.length && kept.every((b) => Array.isArray(b.enum))) {
        return described({ type: kept[0].type, enum: kept.flatMap((b) => b.enum) });
      }
    }
    return schema;
  }

  function fields(schema, example, id, path, required, root) {
    root = root || schema;
    schema = plain(schema, root);
    const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
    if (type === 'object' || schema.properties) {
      const box = el('div', { class: 'object' });
      for (let [name, sub] of Object.entries(schema.properties || {})) {
        const value = example && typeof example === 'object' ? example[name] : undefined;
        const required = (schema.required || []).includes(name);
        const inner = fields(sub, value, `${id}-${name}`, path.concat(name), required, root);
        sub = plain(sub, root);
        if (inner.tagName === 'DIV') {
          box.append(el('fieldset', {}, el('legend', {}, name), sub.description ? el('p', { class: 'hint' }, sub.description) : null, inner));
        } else {
          box.append(el('label', { for: `${id}-${name}` }, name + (required ? '' : ' (optional)'), sub.description ? el('span', { class: 'hint' }, ` — ${sub.description}`) : null), inner);
        }
      }
      return box;
    }
    const attrs = { id, 'data-path': JSON.stringify(path), 'data-type': type || 'json' };
    if (Array.isArray(schema.enum)) {
      const choices = schema.enum.map((v) => el('option', { value: JSON.stringify(v) }, String(v)));
      if (!required) choices.unshift(el('option', { value: '' }, '— (leave out)'));
      const select = el('select', attrs, choices);
      if (example !== undefined) select.value = JSON.stringify(example);
      return select;
    }
    if (type === 'boolean') return el('input', Object.assign(attrs, { type: 'checkbox', checked: example === true }));
    if (type === 'integer' || type === 'number') {
      return el('input', Object.assign(attrs, { type: 'number', step: type === 'integer' ? 1 : 'any',
        min: schema.minimum, max: schema.maximum, value: example === undefined ? '' : example }));
    }
    if (type === 'string') return el('input', Object.assign(attrs, { value: example === undefined ? '' : example, autocomplete: 'off' }));
    // Arrays and anything else: JSON text, with the example.
    return el('textarea', Object.assign(attrs, { rows: 2 }), example === undefined ? '' : JSON.stringify(example));
  }

  function resolveBody(form) {
    const inputs = {};
    for (const input of form.querySelectorAll('[data-path]')) {
      const path = JSON.parse(input.dataset.path);
      let value;
      const type = input.dataset.type;
      if (input.tagName === 'SELECT') {
        if (input.value === '') continue;
        value = JSON.parse(input.value);
      }
      else if (type === 'boolean') value = input.checked;
      else if (input.value.trim() === '') continue;
      else if (type === 'integer' || type === 'number') value = Number(input.value);
      else if (type === 'string') value = input.value;
      else {
        try {
          value = JSON.parse(input.value);
        } catch (e) {
          throw new Error(`${path.join('.')} is not JSON`);
        }
      }
      let at = inputs;
      for (const key of path.slice(0, -1)) at = at[key] = at[key] || {};
      at[path[path.length - 1]] = value;
    }
    const b = { action: form.dataset.action, inputs };
    const sealed = form.querySelector('[data-sealed]').value.trim();
    if (sealed) b.sealed = sealed;
    return b;
  }

  /** The sealed choices: who sealed what, hidden until both sides are in. */
  async function showSeals() {
    const answer = await api('GET', `/v1/campaigns/${campaign}/posts?limit=100`);
    if (!answer.ok) return '';
    const seals = answer.data.posts.filter((p) => p.kind === 'seal' && !p.void);
    $('seals').replaceChildren(seals.length ? el('ul', { id: 'seal-list' }, seals.map((p) => el('li', { class: `seal ${p.body.choice === 'sealed' ? 'hidden' : 'revealed'}` },
      `${p.body.topic}: ${Adj.sideName(p.side)} as ${p.body.role} — `,
      el('b', { class: 'choice' }, p.body.choice === 'sealed' ? 'sealed (not revealed yet)' : p.body.choice)))) : el('p', {}, 'No sealed choices yet.'));
    const posts = answer.data.posts;
    return posts.length ? posts[posts.length - 1].seq : 0;
  }

  /** "Your last order": the newest post this player made, from this page or (after a reload, or
   * from another device) from the log as the stream brings it. */
  let receiptSeq = 0;
  function showReceipt(post) {
    if (post.seq < receiptSeq) return;
    receiptSeq = post.seq;
    $('receipt').replaceChildren(Adj.receipt(post));
  }

  /** The log from the event stream: each post once, the state refreshed after it. */
  function listen() {
    const status = $('stream-status');
    const source = new EventSource(`/v1/campaigns/${campaign}/events`);
    let timer = null;
    source.addEventListener('open', () => { status.textContent = 'Live: new posts appear by themselves.'; });
    source.addEventListener('error', () => { status.textContent = 'Reconnecting…'; });
    source.addEventListener('post', (event) => {
      const post = JSON.parse(event.data);
      // The page's other parts (the turn-by-turn history) learn of it too.
      document.dispatchEvent(new CustomEvent('adjutant:post', { detail: post }));
      const old = $(`post-${post.seq}`);
      const item = Adj.postItem(post);
      if (me && me.id && post.author_id === me.id) showReceipt(post);
      if (old) old.replaceWith(item);
      else $('posts').prepend(item);
      $('posts').dataset.last = post.seq;
      if (post.kind === 'rollback' && !post.void) {
        // A rollback voids every post after the one it goes back to.
        for (let seq = post.body.to_seq + 1; seq < post.seq; seq += 1) {
          const voided = $(`post-${seq}`);
          if (voided) voided.classList.add('void');
        }
      }
      clearTimeout(timer);
      timer = setTimeout(refresh, 150);
    });
  }
})();
