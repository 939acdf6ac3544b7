//! Validation and compilation of the file structs into [`Config`]: every problem is collected
//! with its key path, so `--validate` can print them all at once.

use std::collections::HashSet;
use std::fmt::Display;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use bytes::Bytes;
use http::header::InvalidHeaderName;
use http::{HeaderName, HeaderValue, StatusCode};

use super::file::*;
use super::upstream::{OriginSettings, PeerCache, UpstreamTable};
use super::*;
use crate::admin::auth::Permission;
use crate::esc::{
    Action, CustomError, EscEntry, FeatureSet, HeaderEdits, PathRewrite, Redirect, StatusRedirect,
    UriRewrite, WireName, MAX_ENTRIES_PER_ZONE,
};
use crate::rules::{Filter, Limits};
use crate::zones::ZoneIndex;

const REDIRECT_CODES: [u16; 5] = [301, 302, 303, 307, 308];
const REDIRECT_CODES_TEXT: &str = "301 or 302 or 303 or 307 or 308";
/// Largest compiled `path_regex`, like the Rules language's own regex cap.
const MAX_PATH_REGEX_SIZE: usize = 1 << 20;

/// Problems found so far, each `path: message`.
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, path: impl Display, message: impl Display) {
        self.0.push(format!("{path}: {message}"));
    }
}

/// Validates and compiles the parsed file.
pub fn compile(file: FileConfig) -> Result<Config, ConfigErrors> {
    let mut problems = Problems::default();
    let server = compile_server(&file.server, &mut problems);
    let demo_origin = file
        .demo_origin
        .as_ref()
        .and_then(|demo| socket_addr(&demo.listen, "demo_origin.listen", &mut problems));
    let accounts = compile_accounts(&file.accounts, &mut problems);
    let account_ids: HashSet<&str> = accounts.iter().map(|a| a.id.as_str()).collect();
    let mut zones = Vec::with_capacity(file.zones.len());
    let mut zone_ids = HashSet::new();
    let mut zone_names = HashSet::new();
    let mut peers = PeerCache::default();
    for (index, zone) in file.zones.iter().enumerate() {
        let path = format!("zones[{index}]");
        let compiled = compile_zone(zone, &path, &account_ids, &mut peers, &mut problems);
        if let Some(compiled) = compiled {
            if !zone_ids.insert(compiled.id.clone()) {
                problems.add(
                    format!("{path}.id"),
                    format!("duplicate zone id {}", compiled.id),
                );
            }
            if !zone_names.insert(compiled.name.clone()) {
                problems.add(
                    format!("{path}.name"),
                    format!("duplicate zone name {}", compiled.name),
                );
            }
            zones.push(compiled);
        }
    }
    check_credentials(&file, &mut problems);
    if !problems.0.is_empty() {
        return Err(ConfigErrors(problems.0));
    }
    let zone_index = ZoneIndex::build(zones.iter().map(|z: &ZoneConfig| z.name.as_str()));
    Ok(Config {
        server,
        accounts,
        zones,
        api_keys: file.api_keys,
        api_tokens: file.api_tokens,
        demo_origin,
        zone_index,
    })
}

fn compile_server(server: &ServerFile, problems: &mut Problems) -> ServerConfig {
    let listen_list = server.listen.as_slice();
    if listen_list.is_empty() {
        problems.add("server.listen", "at least one address expected");
    }
    let listen = listen_list
        .iter()
        .enumerate()
        .filter_map(|(i, a)| socket_addr(a, format!("server.listen[{i}]"), problems))
        .collect();
    let admin_listen = server
        .admin_listen
        .as_ref()
        .and_then(|a| socket_addr(a, "server.admin_listen", problems));
    let threads = server.threads.unwrap_or(DEFAULT_THREADS);
    if threads == 0 || threads > 1024 {
        problems.add(
            "server.threads",
            format!("1 to 1024 expected, got {threads}"),
        );
    }
    let pool = server
        .upstream_keepalive_pool_size
        .unwrap_or(DEFAULT_UPSTREAM_KEEPALIVE_POOL_SIZE);
    if pool == 0 {
        problems.add("server.upstream_keepalive_pool_size", "at least 1 expected");
    }
    ServerConfig {
        listen,
        admin_listen,
        threads,
        state_path: server
            .state_path
            .clone()
            .unwrap_or_else(|| DEFAULT_STATE_PATH.into()),
        grace_period_seconds: server
            .grace_period_seconds
            .unwrap_or(DEFAULT_GRACE_PERIOD_SECONDS),
        graceful_shutdown_timeout_seconds: server
            .graceful_shutdown_timeout_seconds
            .unwrap_or(DEFAULT_GRACEFUL_SHUTDOWN_TIMEOUT_SECONDS),
        upstream_keepalive_pool_size: pool,
        work_stealing: server.work_stealing.unwrap_or(true),
    }
}

fn compile_accounts(accounts: &[AccountFile], problems: &mut Problems) -> Vec<AccountConfig> {
    let mut seen = HashSet::new();
    accounts
        .iter()
        .enumerate()
        .map(|(i, account)| {
            check_id(&account.id, format!("accounts[{i}].id"), problems);
            if !seen.insert(account.id.as_str()) {
                problems.add(
                    format!("accounts[{i}].id"),
                    format!("duplicate account id {}", account.id),
                );
            }
            if account.name.trim().is_empty() {
                problems.add(format!("accounts[{i}].name"), "must not be empty");
            }
            AccountConfig {
                id: account.id.clone(),
                name: account.name.clone(),
            }
        })
        .collect()
}

fn compile_zone(
    zone: &ZoneFile,
    path: &str,
    account_ids: &HashSet<&str>,
    peers: &mut PeerCache,
    problems: &mut Problems,
) -> Option<ZoneConfig> {
    check_id(&zone.id, format!("{path}.id"), problems);
    let name = zone.name.to_ascii_lowercase();
    if !is_host_name(&name) {
        problems.add(
            format!("{path}.name"),
            format!("a host name like example.com expected, got {:?}", zone.name),
        );
    }
    if !account_ids.contains(zone.account_id.as_str()) {
        problems.add(
            format!("{path}.account_id"),
            format!("no [[accounts]] entry has id {:?}", zone.account_id),
        );
    }
    let plan = match zone.plan.as_deref().unwrap_or("enterprise") {
        "free" => Plan::Free,
        "pro" => Plan::Pro,
        "business" => Plan::Business,
        "enterprise" => Plan::Enterprise,
        other => {
            problems.add(
                format!("{path}.plan"),
                format!("free or pro or business or enterprise expected, got {other:?}"),
            );
            Plan::Free
        }
    };
    let origin = resolve(&zone.origin, format!("{path}.origin"), problems);
    let origin_sni = zone.origin_sni.clone().unwrap_or_else(|| name.clone());
    if zone.origin_sni.is_some() && !is_host_name(&origin_sni) {
        problems.add(
            format!("{path}.origin_sni"),
            format!("a host name expected, got {origin_sni:?}"),
        );
    }
    if zone.origin_sni.is_some() && !zone.origin_tls {
        problems.add(format!("{path}.origin_sni"), "needs origin_tls = true");
    }
    if zone.esc.len() > MAX_ENTRIES_PER_ZONE {
        problems.add(
            format!("{path}.esc"),
            format!(
                "at most {MAX_ENTRIES_PER_ZONE} entries, got {}",
                zone.esc.len()
            ),
        );
    }
    // Index 0 of both lists is the zone's own origin and SNI.
    let mut addresses = vec![origin.unwrap_or(SocketAddr::from(([127, 0, 0, 1], 0)))];
    let mut snis = vec![origin_sni.clone()];
    let esc = zone
        .esc
        .iter()
        .enumerate()
        .map(|(i, entry)| {
            let ctx = EntryContext {
                path: format!("{path}.esc[{i}]"),
                origin_tls: zone.origin_tls,
            };
            compile_entry(entry, &ctx, &mut addresses, &mut snis, problems)
        })
        .collect();
    let settings = OriginSettings {
        tls: zone.origin_tls,
        verify_cert: zone.origin_verify_cert.unwrap_or(true),
        connect_timeout: Duration::from_millis(
            zone.origin_connect_timeout_ms
                .unwrap_or(DEFAULT_ORIGIN_CONNECT_TIMEOUT_MS),
        ),
        read_timeout: Duration::from_millis(
            zone.origin_read_timeout_ms
                .unwrap_or(DEFAULT_ORIGIN_READ_TIMEOUT_MS),
        ),
    };
    origin?;
    Some(ZoneConfig {
        id: zone.id.clone(),
        name,
        account_id: zone.account_id.clone(),
        plan,
        debug_header: zone.debug_header,
        origin: zone.origin.clone(),
        origin_tls: zone.origin_tls,
        origin_sni,
        compression: zone.compression,
        upstreams: UpstreamTable::build(&addresses, &snis, &settings, peers),
        esc,
    })
}

struct EntryContext {
    path: String,
    origin_tls: bool,
}

fn compile_entry(
    entry: &EscFile,
    ctx: &EntryContext,
    addresses: &mut Vec<SocketAddr>,
    snis: &mut Vec<String>,
    problems: &mut Problems,
) -> EscEntry {
    let path = &ctx.path;
    let when = entry.when.as_ref().and_then(|expression| {
        Filter::compile(expression, &Limits::default())
            .map_err(|e| problems.add(format!("{path}.when"), e))
            .ok()
    });
    let mut actions = Vec::new();
    if let Some(edits) = &entry.request_headers {
        let edits = header_edits(edits, &format!("{path}.request_headers"), problems);
        actions.push(Action::RequestHeaders(edits));
    }
    if let Some(host) = &entry.host_header {
        if !is_host_name(&host.to_ascii_lowercase()) && !is_host_with_port(host) {
            problems.add(
                format!("{path}.host_header"),
                format!("a host name expected, got {host:?}"),
            );
        } else if let Some(value) = header_value(host, &format!("{path}.host_header"), problems) {
            actions.push(Action::HostHeader(value));
        }
    }
    if let Some(rewrite) = &entry.rewrite_uri {
        if let Some(rewrite) = uri_rewrite(rewrite, &format!("{path}.rewrite_uri"), problems) {
            actions.push(Action::RewriteUri(rewrite));
        }
    }
    if let Some(redirect) = &entry.redirect {
        if let Some(redirect) = compile_redirect(redirect, &format!("{path}.redirect"), problems) {
            actions.push(Action::Redirect(redirect));
        }
    }
    if let Some(address) = &entry.resolve_override {
        if let Some(address) = resolve(address, format!("{path}.resolve_override"), problems) {
            actions.push(Action::ResolveOverride(index_of(addresses, address)));
        }
    }
    if let Some(sni) = &entry.sni {
        let sni = sni.to_ascii_lowercase();
        if !ctx.origin_tls {
            problems.add(format!("{path}.sni"), "needs origin_tls = true on the zone");
        } else if !is_host_name(&sni) {
            problems.add(
                format!("{path}.sni"),
                format!("a host name expected, got {sni:?}"),
            );
        } else {
            actions.push(Action::Sni(index_of(snis, sni)));
        }
    }
    if let Some(names) = &entry.feature_exceptions {
        let mut set = FeatureSet::default();
        for (i, name) in names.iter().enumerate() {
            match FeatureSet::from_name(name) {
                Some(feature) => set = set.union(feature),
                None => problems.add(
                    format!("{path}.feature_exceptions[{i}]"),
                    format!("compression or waf expected, got {name:?}"),
                ),
            }
        }
        actions.push(Action::FeatureExceptions(set));
    }
    if let Some(edits) = &entry.response_headers {
        let edits = header_edits(edits, &format!("{path}.response_headers"), problems);
        actions.push(Action::ResponseHeaders(edits));
    }
    if let Some(cookies) = &entry.add_cookies {
        let values = cookies
            .iter()
            .enumerate()
            .filter_map(|(i, text)| {
                let key = format!("{path}.add_cookies[{i}]");
                match cookie::Cookie::parse(text.as_str()) {
                    Ok(parsed) if !parsed.name().is_empty() => header_value(text, &key, problems),
                    _ => {
                        problems.add(key, format!("a Set-Cookie value expected, got {text:?}"));
                        None
                    }
                }
            })
            .collect();
        actions.push(Action::AddCookies(values));
    }
    if let Some(custom) = &entry.custom_error {
        if let Some(custom) = custom_error(custom, &format!("{path}.custom_error"), problems) {
            actions.push(Action::CustomError(custom));
        }
    }
    if let Some(redirect) = &entry.status_redirect {
        let key = format!("{path}.status_redirect");
        if let Some(redirect) = status_redirect(redirect, &key, problems) {
            actions.push(Action::StatusRedirect(redirect));
        }
    }
    let has_action = entry.request_headers.is_some()
        || entry.host_header.is_some()
        || entry.rewrite_uri.is_some()
        || entry.redirect.is_some()
        || entry.resolve_override.is_some()
        || entry.sni.is_some()
        || entry.feature_exceptions.is_some()
        || entry.response_headers.is_some()
        || entry.add_cookies.is_some()
        || entry.custom_error.is_some()
        || entry.status_redirect.is_some();
    if !has_action {
        problems.add(path, "no action: at least one customization key expected");
    }
    EscEntry {
        description: entry.description.clone().unwrap_or_default(),
        when,
        actions,
    }
}

/// Position of `item` in `list`, appending it when new.
fn index_of<T: PartialEq>(list: &mut Vec<T>, item: T) -> u16 {
    match list.iter().position(|known| *known == item) {
        Some(index) => index as u16,
        None => {
            list.push(item);
            (list.len() - 1) as u16
        }
    }
}

fn header_edits(edits: &HeaderEditsFile, path: &str, problems: &mut Problems) -> HeaderEdits {
    let pairs =
        |map: &std::collections::BTreeMap<String, String>, key: &str, problems: &mut Problems| {
            map.iter()
                .filter_map(|(name, value)| {
                    let name_path = format!("{path}.{key}.{name:?}");
                    let name = checked_name(WireName::parse(name), name, &name_path, problems)?;
                    let value = header_value(value, &name_path, problems)?;
                    Some((name, value))
                })
                .collect::<Vec<_>>()
        };
    HeaderEdits {
        set: pairs(&edits.set, "set", problems),
        add: pairs(&edits.add, "add", problems),
        remove: edits
            .remove
            .iter()
            .enumerate()
            .filter_map(|(i, name)| header_name(name, &format!("{path}.remove[{i}]"), problems))
            .collect(),
    }
}

fn header_name(name: &str, path: &str, problems: &mut Problems) -> Option<HeaderName> {
    // `from_bytes` lowercases.
    checked_name(
        HeaderName::from_bytes(name.as_bytes()),
        name,
        path,
        problems,
    )
}

fn checked_name<T>(
    parsed: Result<T, InvalidHeaderName>,
    name: &str,
    path: &str,
    problems: &mut Problems,
) -> Option<T> {
    parsed
        .map_err(|_| problems.add(path, format!("a header name expected, got {name:?}")))
        .ok()
}

fn header_value(value: &str, path: &str, problems: &mut Problems) -> Option<HeaderValue> {
    HeaderValue::from_str(value)
        .map_err(|_| {
            problems.add(
                path,
                format!("a printable header value expected, got {value:?}"),
            )
        })
        .ok()
}

fn uri_rewrite(file: &RewriteUriFile, path: &str, problems: &mut Problems) -> Option<UriRewrite> {
    let path_rewrite = match (&file.path, &file.path_regex, &file.path_replace) {
        (Some(fixed), None, None) => {
            if !fixed.starts_with('/') {
                problems.add(
                    format!("{path}.path"),
                    format!("must start with /, got {fixed:?}"),
                );
                return None;
            }
            Some(PathRewrite::Fixed(fixed.clone()))
        }
        (None, Some(pattern), Some(replace)) => {
            match regex::RegexBuilder::new(pattern)
                .size_limit(MAX_PATH_REGEX_SIZE)
                .build()
            {
                Ok(regex) => Some(PathRewrite::from_regex(regex, replace.clone())),
                Err(e) => {
                    problems.add(format!("{path}.path_regex"), e);
                    return None;
                }
            }
        }
        (None, None, None) => None,
        _ => {
            problems.add(
                path,
                "either path, or path_regex with path_replace, expected",
            );
            return None;
        }
    };
    if path_rewrite.is_none() && file.query.is_none() {
        problems.add(path, "path, path_regex or query expected");
        return None;
    }
    UriRewrite::new(path_rewrite, file.query.clone())
        .map_err(|e| problems.add(path, format!("not a valid URI: {e}")))
        .ok()
}

fn redirect_code(code: u16, path: String, problems: &mut Problems) -> Option<StatusCode> {
    if REDIRECT_CODES.contains(&code) {
        StatusCode::from_u16(code).ok()
    } else {
        problems.add(path, format!("{REDIRECT_CODES_TEXT} expected, got {code}"));
        None
    }
}

fn redirect_target(to: &str, path: String, problems: &mut Problems) -> Option<HeaderValue> {
    let valid = match to.parse::<http::Uri>() {
        Ok(uri) => {
            (uri.scheme().is_some() && uri.authority().is_some())
                || (uri.scheme().is_none() && to.starts_with('/'))
        }
        Err(_) => false,
    };
    if !valid {
        problems.add(
            path,
            format!("an absolute URL or a path expected, got {to:?}"),
        );
        return None;
    }
    HeaderValue::from_str(to).ok()
}

fn compile_redirect(file: &RedirectFile, path: &str, problems: &mut Problems) -> Option<Redirect> {
    let status = redirect_code(
        file.status.unwrap_or(302),
        format!("{path}.status"),
        problems,
    );
    let location = redirect_target(&file.to, format!("{path}.to"), problems);
    Some(Redirect {
        status: status?,
        to: file.to.clone(),
        location: location?,
        preserve_query: file.preserve_query,
    })
}

fn status_list(
    statuses: &[u16],
    range: std::ops::RangeInclusive<u16>,
    path: &str,
    problems: &mut Problems,
) -> bool {
    if statuses.is_empty() {
        problems.add(path, "at least one status expected");
        return false;
    }
    let mut valid = true;
    for (i, status) in statuses.iter().enumerate() {
        if !range.contains(status) {
            problems.add(
                format!("{path}[{i}]"),
                format!(
                    "{} to {} expected, got {status}",
                    range.start(),
                    range.end()
                ),
            );
            valid = false;
        }
    }
    valid
}

fn custom_error(
    file: &CustomErrorFile,
    path: &str,
    problems: &mut Problems,
) -> Option<CustomError> {
    let statuses_ok = status_list(&file.status, 400..=599, &format!("{path}.status"), problems);
    let content_type = header_value(
        file.content_type
            .as_deref()
            .unwrap_or("text/plain; charset=utf-8"),
        &format!("{path}.content_type"),
        problems,
    );
    statuses_ok.then_some(())?;
    Some(CustomError {
        statuses: file.status.clone(),
        content_type: content_type?,
        body: Bytes::from(file.body.clone()),
    })
}

fn status_redirect(
    file: &StatusRedirectFile,
    path: &str,
    problems: &mut Problems,
) -> Option<StatusRedirect> {
    let statuses_ok = status_list(&file.status, 100..=599, &format!("{path}.status"), problems);
    let code = redirect_code(file.code.unwrap_or(302), format!("{path}.code"), problems);
    let location = redirect_target(&file.to, format!("{path}.to"), problems);
    statuses_ok.then_some(())?;
    Some(StatusRedirect {
        statuses: file.status.clone(),
        location: location?,
        code: code?,
    })
}

fn check_credentials(file: &FileConfig, problems: &mut Problems) {
    for (i, key) in file.api_keys.iter().enumerate() {
        if !is_email(&key.email) {
            problems.add(
                format!("api_keys[{i}].email"),
                format!(
                    "an address like ops@example.com expected, got {:?}",
                    key.email
                ),
            );
        }
        check_sha256(
            &key.key_sha256,
            format!("api_keys[{i}].key_sha256"),
            problems,
        );
        check_scope(&key.accounts, &format!("api_keys[{i}].accounts"), problems);
    }
    for (i, token) in file.api_tokens.iter().enumerate() {
        check_id(&token.id, format!("api_tokens[{i}].id"), problems);
        check_sha256(
            &token.token_sha256,
            format!("api_tokens[{i}].token_sha256"),
            problems,
        );
        if token.permissions.is_empty() {
            problems.add(format!("api_tokens[{i}].permissions"), "must not be empty");
        }
        for (j, permission) in token.permissions.iter().enumerate() {
            if Permission::parse(permission).is_none() {
                problems.add(
                    format!("api_tokens[{i}].permissions[{j}]"),
                    format!(
                        "one of {} expected, got {permission:?}",
                        Permission::ALL.map(Permission::as_str).join(", ")
                    ),
                );
            }
        }
        if token.zones.is_empty() && token.accounts.is_empty() {
            problems.add(format!("api_tokens[{i}]"), "zones or accounts expected");
        }
        for (j, zone) in token.zones.iter().enumerate() {
            check_id(zone, format!("api_tokens[{i}].zones[{j}]"), problems);
        }
        if !token.accounts.is_empty() {
            check_scope(
                &token.accounts,
                &format!("api_tokens[{i}].accounts"),
                problems,
            );
        }
    }
}

fn is_email(email: &str) -> bool {
    email.split_once('@').is_some_and(|(local, domain)| {
        !local.is_empty() && domain.contains('.') && !email.chars().any(char::is_whitespace)
    })
}

fn check_scope(accounts: &[String], path: &str, problems: &mut Problems) {
    if accounts.is_empty() {
        problems.add(path, "at least one account id or \"*\" expected");
    }
    for (j, account) in accounts.iter().enumerate() {
        if account != "*" {
            check_id(account, format!("{path}[{j}]"), problems);
        }
    }
}

fn is_lower_hex(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn check_id(id: &str, path: String, problems: &mut Problems) {
    if !is_lower_hex(id, 32) {
        problems.add(
            path,
            format!("32 lowercase hex digits expected, got {id:?}"),
        );
    }
}

fn check_sha256(digest: &str, path: String, problems: &mut Problems) {
    if !is_lower_hex(digest, 64) {
        problems.add(
            path,
            "64 lowercase hex digits expected (escgate hash-secret prints them)",
        );
    }
}

/// A lowercase DNS name: labels of letters, digits, `-` (and `_`), no leading or trailing dot.
fn is_host_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
        })
}

fn is_host_with_port(host: &str) -> bool {
    match host.rsplit_once(':') {
        Some((name, port)) => {
            is_host_name(&name.to_ascii_lowercase()) && port.parse::<u16>().is_ok()
        }
        None => false,
    }
}

fn socket_addr(text: &str, path: impl Display, problems: &mut Problems) -> Option<SocketAddr> {
    text.parse()
        .map_err(|_| problems.add(path, format!("an IP:port address expected, got {text:?}")))
        .ok()
}

/// `host:port` resolved once, at load.
fn resolve(text: &str, path: String, problems: &mut Problems) -> Option<SocketAddr> {
    if let Ok(address) = text.parse() {
        return Some(address);
    }
    if !is_host_with_port(text) {
        problems.add(path, format!("host:port expected, got {text:?}"));
        return None;
    }
    match text.to_socket_addrs().map(|mut all| all.next()) {
        Ok(Some(address)) => Some(address),
        _ => {
            problems.add(path, format!("{text:?} does not resolve"));
            None
        }
    }
}
