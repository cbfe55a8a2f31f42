//! The Q-table of the RL manager: Eq. 1 (the Q-learning update), Eq. 2 (ε-greedy selection) and the
//! saved form (serde; the runner writes it as JSON for pre-training, Fig. 8).

use nandstack_core::{Error, Result, Rng};
use serde::{Deserialize, Serialize};

/// Format tag of a saved table.
pub const QTABLE_FORMAT: &str = "nandstack-qtable-v1";

/// Q(s, a) for every state and action, plus how often each entry was updated.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QTable {
    /// Always `nandstack-qtable-v1`.
    pub format: String,
    /// Bins of each state dimension (the state index is mixed-radix in this order, first most
    /// significant): SLC size, utilisation, previous action, SLC write demand, SLC update frequency.
    pub state_bins: Vec<u32>,
    pub actions: u32,
    /// Q values, row-major: `q[state × actions + action]`.
    pub q: Vec<f64>,
    /// Updates applied to each entry.
    pub visits: Vec<u32>,
}

impl QTable {
    /// A zero table.
    pub fn new(state_bins: &[u32], actions: u32) -> QTable {
        let states: u32 = state_bins.iter().product();
        let n = (states * actions) as usize;
        QTable {
            format: QTABLE_FORMAT.into(),
            state_bins: state_bins.to_vec(),
            actions,
            q: vec![0.0; n],
            visits: vec![0; n],
        }
    }
    pub fn states(&self) -> u32 {
        self.state_bins.iter().product()
    }
    /// Check a loaded table against the shape the agent uses.
    pub fn validate(&self, state_bins: &[u32], actions: u32, key: &str) -> Result<()> {
        if self.format != QTABLE_FORMAT {
            return Err(Error::config(
                key,
                format!("format is `{}`, expected `{QTABLE_FORMAT}`", self.format),
            ));
        }
        if self.state_bins != state_bins || self.actions != actions {
            return Err(Error::config(
                key,
                format!(
                    "table has state bins {:?} × {} actions; the agent uses {state_bins:?} × {actions}",
                    self.state_bins, self.actions
                ),
            ));
        }
        let n = (self.states() * actions) as usize;
        if self.q.len() != n || self.visits.len() != n {
            return Err(Error::config(
                key,
                format!("table needs {n} Q values and visit counts"),
            ));
        }
        if let Some(i) = self.q.iter().position(|x| !x.is_finite()) {
            return Err(Error::config(key, format!("Q value {i} is not finite")));
        }
        Ok(())
    }
    #[inline]
    pub fn get(&self, s: u32, a: u32) -> f64 {
        self.q[(s * self.actions + a) as usize]
    }
    /// Overwrite Q(s, a) (a quantised value, `qquant`).
    pub fn set(&mut self, s: u32, a: u32, v: f64) {
        self.q[(s * self.actions + a) as usize] = v;
    }
    fn row(&self, s: u32) -> &[f64] {
        let k = (s * self.actions) as usize;
        &self.q[k..k + self.actions as usize]
    }
    /// max_a Q(s, a).
    pub fn max_q(&self, s: u32) -> f64 {
        self.row(s)
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }
    /// Eq. 1: Q(s,a) ← Q(s,a) + α (r + γ max_a' Q(s',a') − Q(s,a)). Returns the new value.
    pub fn update(&mut self, s: u32, a: u32, r: f64, s_next: u32, alpha: f64, gamma: f64) -> f64 {
        let target = r + gamma * self.max_q(s_next);
        let i = (s * self.actions + a) as usize;
        self.q[i] += alpha * (target - self.q[i]);
        self.visits[i] = self.visits[i].saturating_add(1);
        self.q[i]
    }
    /// argmax_a Q(s, a). Ties: `prefer` when it is among the maxima, else uniformly at random (seeded).
    pub fn best(&self, s: u32, prefer: Option<u32>, rng: &mut Rng) -> u32 {
        let row = self.row(s);
        let m = self.max_q(s);
        if let Some(p) = prefer.filter(|&p| row[p as usize] == m) {
            return p;
        }
        let ties = row.iter().filter(|&&x| x == m).count() as u64;
        let mut k = if ties > 1 { rng.below(ties) } else { 0 };
        for (a, &x) in row.iter().enumerate() {
            if x == m {
                if k == 0 {
                    return a as u32;
                }
                k -= 1;
            }
        }
        unreachable!("the maximum is in the row")
    }
    /// Eq. 2: with probability 1 − ε the best action a* (ties as [`QTable::best`]), with probability ε a
    /// uniformly chosen action other than a*. Returns the action and whether it explored.
    pub fn epsilon_greedy(
        &self,
        s: u32,
        epsilon: f64,
        prefer: Option<u32>,
        rng: &mut Rng,
    ) -> (u32, bool) {
        let best = self.best(s, prefer, rng);
        if self.actions > 1 && rng.chance(epsilon) {
            let mut a = rng.below(self.actions as u64 - 1) as u32;
            if a >= best {
                a += 1;
            }
            (a, true)
        } else {
            (best, false)
        }
    }
    /// States with at least one updated entry.
    pub fn states_visited(&self) -> u64 {
        self.visits
            .chunks(self.actions as usize)
            .filter(|r| r.iter().any(|&v| v > 0))
            .count() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eq1_hand_worked() {
        // Q(s=1,a=2) = 0.5; next state's best Q = 2.0 (action 0); r = +1, α = 0.1, γ = 0.9:
        // 0.5 + 0.1 × (1 + 0.9 × 2.0 − 0.5) = 0.5 + 0.1 × 2.3 = 0.73.
        let mut t = QTable::new(&[3], 3);
        t.q[3 + 2] = 0.5;
        t.q[2 * 3] = 2.0;
        t.q[2 * 3 + 1] = -4.0;
        let v = t.update(1, 2, 1.0, 2, 0.1, 0.9);
        assert!((v - 0.73).abs() < 1e-12, "{v}");
        assert_eq!(t.visits[5], 1);
        // A negative reward into a state of all-negative values: 0.73 + 0.5 × (−1 + 0.9 × (−4 ... max) ...
        t.q[0] = -1.0;
        t.q[1] = -3.0;
        t.q[2] = -2.0;
        // max over state 0 is −1: 0.73 + 0.5 × (−1 + 0.9 × −1 − 0.73) = 0.73 − 1.315 = −0.585.
        let v = t.update(1, 2, -1.0, 0, 0.5, 0.9);
        assert!((v + 0.585).abs() < 1e-12, "{v}");
    }

    #[test]
    fn ties_are_random_and_unique_maxima_win() {
        let mut t = QTable::new(&[1], 9);
        let mut rng = Rng::new(5);
        let mut seen = [0u32; 9];
        for _ in 0..9000 {
            seen[t.best(0, None, &mut rng) as usize] += 1;
        }
        assert!(seen.iter().all(|&c| (800..1200).contains(&c)), "{seen:?}");
        assert!(
            (0..100).all(|_| t.best(0, Some(4), &mut rng) == 4),
            "preferred among ties"
        );
        t.q[6] = 0.1;
        assert!((0..100).all(|_| t.best(0, None, &mut rng) == 6));
        assert!(
            (0..100).all(|_| t.best(0, Some(4), &mut rng) == 6),
            "a unique maximum wins"
        );
    }

    #[test]
    fn epsilon_greedy_explores_at_the_configured_rate() {
        let mut t = QTable::new(&[2], 9);
        t.q[2] = 1.0; // state 0: unique best action 2
        let mut rng = Rng::new(2024);
        let n = 200_000;
        let mut counts = [0u32; 9];
        let mut explored = 0;
        for _ in 0..n {
            let (a, e) = t.epsilon_greedy(0, 0.07, Some(4), &mut rng);
            counts[a as usize] += 1;
            explored += e as u32;
            assert_eq!(
                e,
                a != 2,
                "exploration never picks a*, exploitation always does"
            );
        }
        let rate = explored as f64 / n as f64;
        // ε = 0.07: binomial sd = sqrt(0.07 × 0.93 / n) ≈ 0.00057; allow 5 sd.
        assert!((rate - 0.07).abs() < 0.003, "exploration rate {rate}");
        for (a, &c) in counts.iter().enumerate().filter(|&(a, _)| a != 2) {
            let share = c as f64 / explored as f64;
            assert!((share - 1.0 / 8.0).abs() < 0.015, "action {a}: {share}");
        }
        let (mut zero, mut all) = (0, 0);
        for _ in 0..1000 {
            zero += t.epsilon_greedy(0, 0.0, None, &mut rng).1 as u32;
            all += t.epsilon_greedy(0, 1.0, None, &mut rng).1 as u32;
        }
        assert_eq!((zero, all), (0, 1000));
    }

    #[test]
    fn validate_rejects_wrong_shapes() {
        let t = QTable::new(&[9, 4, 9, 2, 2], 9);
        assert_eq!(t.states(), 1296);
        assert_eq!(t.q.len(), 11_664);
        t.validate(&[9, 4, 9, 2, 2], 9, "k").unwrap();
        let e = t
            .validate(&[9, 4, 9, 2, 3], 9, "device.manager.rl.load_q_table")
            .unwrap_err();
        assert!(
            e.to_string().contains("device.manager.rl.load_q_table"),
            "{e}"
        );
    }
}
