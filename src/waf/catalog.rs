//! The managed rules catalog: the single source of truth for both WAF generations.
//!
//! `catalog.json` (compiled into the binary) holds the previous WAF's packages, groups and rules,
//! the new WAF's managed rulesets with their rules and categories, and for every previous rule the
//! id of the new rule that replaces it. It is parsed once into [`Catalog`], whose indexes make
//! every lookup by id a hash lookup.

use std::collections::{HashMap, HashSet};
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

/// Cloudflare Managed Ruleset id.
pub const MANAGED_RULESET_ID: &str = "efb7b8c949ac4650a09736fc376e9aee";
/// Cloudflare OWASP Core Ruleset id.
pub const OWASP_RULESET_ID: &str = "4814384a9e5d4991b9815dcfc25d2f1f";
/// The OWASP ruleset rule that compares the inbound anomaly score with its threshold.
pub const OWASP_ANOMALY_RULE_ID: &str = "6179ae15870a4bb7b2d480d4843b323c";

const CATALOG_JSON: &str = include_str!("catalog.json");

/// How a previous-WAF package detects attacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DetectionMode {
    /// OWASP package: rules add to a score; `sensitivity` and `action_mode` apply to the package.
    Anomaly,
    /// Vendor package: each rule has its own mode.
    Traditional,
}

/// A previous-WAF rule.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LegacyRule {
    pub id: String,
    pub description: String,
    /// A string, as the previous API returned it.
    pub priority: String,
    pub allowed_modes: Vec<String>,
    pub default_mode: String,
    /// The rule of the new managed ruleset that replaces this one.
    pub new_rule_id: String,
}

/// A previous-WAF rule group.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LegacyGroup {
    pub id: String,
    pub name: String,
    pub description: String,
    /// `on` or `off`.
    pub default_mode: String,
    pub rules: Vec<LegacyRule>,
}

/// A previous-WAF package.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct LegacyPackage {
    pub id: String,
    pub name: String,
    pub description: String,
    pub detection_mode: DetectionMode,
    pub groups: Vec<LegacyGroup>,
}

/// A rule of a new managed ruleset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManagedRule {
    pub id: String,
    pub description: String,
    /// `paranoia-level-N`, attack classes (`attack-sqli`, `sqli`, …).
    pub categories: Vec<String>,
    pub default_action: String,
    pub default_enabled: bool,
    /// Whether a rule override may set `score_threshold` (the OWASP anomaly rule only).
    #[serde(default)]
    pub score_threshold: bool,
}

/// A new-WAF managed ruleset.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ManagedRuleset {
    pub id: String,
    pub name: String,
    pub description: String,
    pub version: String,
    pub last_updated: String,
    pub rules: Vec<ManagedRule>,
}

#[derive(Deserialize)]
struct CatalogFile {
    packages: Vec<LegacyPackage>,
    rulesets: Vec<ManagedRuleset>,
}

/// Where a previous rule sits: package, group and rule indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyRulePos {
    pub package: usize,
    pub group: usize,
    pub rule: usize,
}

/// The parsed catalog with its indexes. Obtain it with [`catalog`].
#[derive(Debug)]
pub struct Catalog {
    pub packages: Vec<LegacyPackage>,
    pub rulesets: Vec<ManagedRuleset>,
    package_index: HashMap<String, usize>,
    group_index: HashMap<String, (usize, usize)>,
    rule_index: HashMap<String, LegacyRulePos>,
    ruleset_index: HashMap<String, usize>,
    managed_rule_index: HashMap<(usize, String), usize>,
    categories: Vec<HashSet<String>>,
}

impl Catalog {
    fn build(file: CatalogFile) -> Catalog {
        let mut catalog = Catalog {
            package_index: HashMap::new(),
            group_index: HashMap::new(),
            rule_index: HashMap::new(),
            ruleset_index: HashMap::new(),
            managed_rule_index: HashMap::new(),
            categories: Vec::new(),
            packages: file.packages,
            rulesets: file.rulesets,
        };
        for (p, package) in catalog.packages.iter().enumerate() {
            catalog.package_index.insert(package.id.clone(), p);
            for (g, group) in package.groups.iter().enumerate() {
                catalog.group_index.insert(group.id.clone(), (p, g));
                for (r, rule) in group.rules.iter().enumerate() {
                    let pos = LegacyRulePos {
                        package: p,
                        group: g,
                        rule: r,
                    };
                    catalog.rule_index.insert(rule.id.clone(), pos);
                }
            }
        }
        for (s, ruleset) in catalog.rulesets.iter().enumerate() {
            catalog.ruleset_index.insert(ruleset.id.clone(), s);
            let mut categories = HashSet::new();
            for (r, rule) in ruleset.rules.iter().enumerate() {
                catalog.managed_rule_index.insert((s, rule.id.clone()), r);
                categories.extend(rule.categories.iter().cloned());
            }
            catalog.categories.push(categories);
        }
        catalog
    }

    /// The package with this id.
    pub fn package(&self, id: &str) -> Option<&LegacyPackage> {
        self.package_index.get(id).map(|&p| &self.packages[p])
    }

    /// The package whose detection mode is `mode` (the catalog holds exactly one of each).
    pub fn package_by_mode(&self, mode: DetectionMode) -> &LegacyPackage {
        self.packages
            .iter()
            .find(|p| p.detection_mode == mode)
            .unwrap_or(&self.packages[0])
    }

    /// The OWASP anomaly package (`detection_mode: "anomaly"`).
    pub fn owasp_package(&self) -> &LegacyPackage {
        self.package_by_mode(DetectionMode::Anomaly)
    }

    /// The vendor package (`detection_mode: "traditional"`).
    pub fn vendor_package(&self) -> &LegacyPackage {
        self.package_by_mode(DetectionMode::Traditional)
    }

    /// The group with this id inside the package `package_id`.
    pub fn group(&self, package_id: &str, group_id: &str) -> Option<&LegacyGroup> {
        let &(p, g) = self.group_index.get(group_id)?;
        (self.packages[p].id == package_id).then(|| &self.packages[p].groups[g])
    }

    /// The rule with this id inside the package `package_id`, with its group.
    pub fn rule(&self, package_id: &str, rule_id: &str) -> Option<(&LegacyGroup, &LegacyRule)> {
        let pos = self.rule_index.get(rule_id)?;
        let package = &self.packages[pos.package];
        (package.id == package_id).then(|| {
            let group = &package.groups[pos.group];
            (group, &group.rules[pos.rule])
        })
    }

    /// A previous rule anywhere in the catalog.
    pub fn legacy_rule(&self, rule_id: &str) -> Option<(&LegacyPackage, &LegacyRule)> {
        let pos = self.rule_index.get(rule_id)?;
        let package = &self.packages[pos.package];
        Some((package, &package.groups[pos.group].rules[pos.rule]))
    }

    /// The managed ruleset with this id.
    pub fn ruleset(&self, id: &str) -> Option<&ManagedRuleset> {
        self.ruleset_index.get(id).map(|&s| &self.rulesets[s])
    }

    /// The rule `rule_id` of the managed ruleset `ruleset_id`.
    pub fn managed_rule(&self, ruleset_id: &str, rule_id: &str) -> Option<&ManagedRule> {
        let &s = self.ruleset_index.get(ruleset_id)?;
        let &r = self.managed_rule_index.get(&(s, rule_id.to_string()))?;
        Some(&self.rulesets[s].rules[r])
    }

    /// Whether some rule of the managed ruleset carries `category`.
    pub fn has_category(&self, ruleset_id: &str, category: &str) -> bool {
        self.ruleset_index
            .get(ruleset_id)
            .is_some_and(|&s| self.categories[s].contains(category))
    }
}

/// The catalog, parsed on first use and shared for the life of the process.
pub fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(|| {
        // The file is part of the source tree; `tests::catalog_is_consistent` guarantees it parses.
        let file: CatalogFile =
            serde_json::from_str(CATALOG_JSON).expect("embedded catalog.json is valid");
        Catalog::build(file)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_is_consistent() {
        let c = catalog();
        assert_eq!(c.packages.len(), 2);
        let owasp = c.owasp_package();
        let vendor = c.vendor_package();
        assert_ne!(owasp.id, vendor.id);
        assert!(c.ruleset(MANAGED_RULESET_ID).is_some());
        assert!(c.ruleset(OWASP_RULESET_ID).is_some());
        let anomaly = c
            .managed_rule(OWASP_RULESET_ID, OWASP_ANOMALY_RULE_ID)
            .expect("anomaly rule");
        assert!(anomaly.score_threshold);
        let mut seen = HashSet::new();
        let mut total = 0;
        for package in &c.packages {
            let target = if package.detection_mode == DetectionMode::Anomaly {
                OWASP_RULESET_ID
            } else {
                MANAGED_RULESET_ID
            };
            for group in &package.groups {
                for rule in &group.rules {
                    total += 1;
                    assert!(
                        seen.insert(rule.id.clone()),
                        "duplicate rule id {}",
                        rule.id
                    );
                    assert!(rule.allowed_modes.contains(&rule.default_mode));
                    assert!(rule.priority.parse::<u32>().is_ok());
                    assert!(
                        c.managed_rule(target, &rule.new_rule_id).is_some(),
                        "rule {} maps to a missing new rule",
                        rule.id
                    );
                }
            }
        }
        assert!(total >= 30, "a few dozen rules expected, got {total}");
        for level in 1..=4 {
            assert!(c.has_category(OWASP_RULESET_ID, &format!("paranoia-level-{level}")));
        }
        for class in ["sqli", "xss", "rce", "lfi", "rfi", "protocol"] {
            assert!(c.has_category(MANAGED_RULESET_ID, class));
            assert!(c.has_category(OWASP_RULESET_ID, &format!("attack-{class}")));
        }
    }

    #[test]
    fn lookups_respect_the_package() {
        let c = catalog();
        let owasp = c.owasp_package();
        let vendor = c.vendor_package();
        let group = &vendor.groups[0];
        assert!(c.group(&vendor.id, &group.id).is_some());
        assert!(c.group(&owasp.id, &group.id).is_none());
        assert!(c.rule(&vendor.id, &group.rules[0].id).is_some());
        assert!(c.rule(&owasp.id, &group.rules[0].id).is_none());
        assert!(c
            .managed_rule(MANAGED_RULESET_ID, OWASP_ANOMALY_RULE_ID)
            .is_none());
    }
}
