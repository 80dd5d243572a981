//! The comparison of two bench documents figure by figure.

use super::{BenchReport, Figure, SCHEMA};
use serde::{Deserialize, Serialize};

/// The change of one figure between two runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// Test or kernel.
    pub test: String,
    /// Metric.
    pub metric: String,
    /// Unit.
    pub unit: String,
    /// Value in A (absent when only B has it).
    pub a: Option<f64>,
    /// Value in B.
    pub b: Option<f64>,
    /// b − a.
    pub delta: Option<f64>,
    /// (b − a) / a × 100.
    pub percent: Option<f64>,
    /// `better`, `worse`, `same` or `-`.
    pub verdict: String,
}

/// A comparison document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Always [`SCHEMA`].
    pub schema: String,
    /// Always `compare`.
    pub kind: String,
    /// Label (or start time) of A.
    pub a: String,
    /// Label (or start time) of B.
    pub b: String,
    /// Per metric.
    pub changes: Vec<Change>,
}

/// Compares two runs figure by figure (A's order, then figures only B has).
pub fn compare(a: &BenchReport, b: &BenchReport) -> Comparison {
    let fa = a.figures();
    let fb = b.figures();
    let key = |f: &Figure| (f.test.clone(), f.metric.clone());
    let mut changes: Vec<Change> = fa
        .iter()
        .map(|x| {
            let y = fb.iter().find(|y| key(y) == key(x));
            let bv = y.map(|y| y.value);
            let delta = bv.map(|v| v - x.value);
            let percent = delta.filter(|_| x.value != 0.0).map(|d| d / x.value.abs() * 100.0);
            let verdict = match percent {
                Some(p) if p.abs() < 0.5 => "same",
                Some(p) if (p > 0.0) == x.higher_is_better => "better",
                Some(_) => "worse",
                None => "-",
            };
            Change {
                test: x.test.clone(),
                metric: x.metric.clone(),
                unit: x.unit.clone(),
                a: Some(x.value),
                b: bv,
                delta,
                percent,
                verdict: verdict.into(),
            }
        })
        .collect();
    changes.extend(
        fb.iter()
            .filter(|y| !fa.iter().any(|x| key(x) == key(y)))
            .map(|y| Change {
                test: y.test.clone(),
                metric: y.metric.clone(),
                unit: y.unit.clone(),
                a: None,
                b: Some(y.value),
                delta: None,
                percent: None,
                verdict: "-".into(),
            }),
    );
    let name = |r: &BenchReport| r.label.clone().unwrap_or_else(|| r.started_at.clone());
    Comparison {
        schema: SCHEMA.into(),
        kind: "compare".into(),
        a: name(a),
        b: name(b),
        changes,
    }
}
