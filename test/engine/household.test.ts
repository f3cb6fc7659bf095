import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { familyTier, householdPremiumCents, ratedMembers, tierColumn } from '../../src/engine/household.ts';
import { ageCurveFor, loadRules } from '../../src/engine/rules.ts';
import { InvariantError } from '../../src/invariant.ts';

const rules = loadRules(2026);

/** Federal default curve values quoted in domain.md §4 (relative to age 21). */
const FEDERAL: Readonly<Record<number, number>> = { 5: 0.765, 9: 0.765, 12: 0.765, 16: 0.859, 22: 1.0, 38: 1.246, 40: 1.278 };
/** Age-21 rate of the worked example: $400 a month. */
const BASE_CENTS = 40_000;
const federalCents = (age: number): number => {
  const f = FEDERAL[age];
  if (f === undefined) throw new Error(`no factor for ${age} in the test table`);
  return Math.round(BASE_CENTS * f);
};

describe('three-child rule (45 CFR 147.102(c)(1), domain.md §4)', () => {
  test('the test curve is the federal default curve of the rules file', () => {
    const curve = ageCurveFor(rules, 'TX').factors;
    // Band index: 0–14 → 0, 15–63 → age − 14.
    for (const [age, f] of Object.entries(FEDERAL)) {
      const a = Number(age);
      assert.equal(curve[a <= 14 ? 0 : a - 14], f, `age ${a}`);
    }
  });

  test('worked example: parents 40 and 38, children 16, 12, 9, 5 → the 5-year-old is free', () => {
    assert.deepEqual(ratedMembers([40, 38, 16, 12, 9, 5], 3, 21), [true, true, true, true, true, false]);
    const h = householdPremiumCents(federalCents, [40, 38, 16, 12, 9, 5], rules, 'TX');
    // 1.278 + 1.246 + 0.859 + 0.765 + 0.765 = 4.913 × $400 = $1,965.20
    assert.equal(h.totalCents, 196_520);
    assert.deepEqual(
      h.members.map((m) => [m.age, m.cents, m.counted]),
      [
        [40, 51_120, true],
        [38, 49_840, true],
        [16, 34_360, true],
        [12, 30_600, true],
        [9, 30_600, true],
        [5, 0, false],
      ],
    );
  });

  test('ratedMembers counts the oldest children as a stable sort by age would, ties to the earlier member', () => {
    // The definition: children sorted by age (descending, stable), the first maxRated of them counted.
    const reference = (ages: number[], max: number, limit: number): boolean[] => {
      const counted = ages.map((a) => a >= limit);
      const children = ages
        .map((age, index) => ({ age, index }))
        .filter((m) => m.age < limit)
        .sort((a, b) => b.age - a.age);
      for (const c of children.slice(0, Math.max(0, max))) counted[c.index] = true;
      return counted;
    };
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed % n;
    };
    for (let k = 0; k < 5_000; k++) {
      const ages = Array.from({ length: 1 + next(10) }, () => (next(3) === 0 ? 21 + next(45) : next(8) * 3));
      const max = next(5) - 1;
      assert.deepEqual(ratedMembers(ages, max, 21), reference(ages, max, 21), `${ages} max ${max}`);
    }
  });

  test('if the 16-year-old were 22 they are rated as an adult and the 5-year-old is charged', () => {
    assert.deepEqual(ratedMembers([40, 38, 22, 12, 9, 5], 3, 21), [true, true, true, true, true, true]);
    const h = householdPremiumCents(federalCents, [40, 38, 22, 12, 9, 5], rules, 'TX');
    // 1.278 + 1.246 + 1.000 + 3 × 0.765 = 5.819 × $400 = $2,327.60
    assert.equal(h.totalCents, 232_760);
    assert.equal(h.members[5]!.counted, true);
    assert.equal(h.members[5]!.cents, 30_600);
  });

  test('children are ranked by age, equal ages by input order, and results keep the input order', () => {
    assert.deepEqual(ratedMembers([5, 16, 9, 12, 40], 3, 21), [false, true, true, true, true]);
    assert.deepEqual(ratedMembers([10, 10, 10, 10], 3, 21), [true, true, true, false]);
    assert.deepEqual(ratedMembers([30, 25, 21], 3, 21), [true, true, true], 'adults are never capped');
    assert.deepEqual(ratedMembers([3, 2], 3, 21), [true, true]);
  });

  test('an empty household is rejected', () => {
    assert.throws(() => householdPremiumCents(federalCents, [], rules, 'TX'), InvariantError);
  });
});

describe('family tiers (NY, VT; domain.md §3.3)', () => {
  test('tier of a household: adults are 21 and over', () => {
    assert.equal(familyTier([40], 21), 'one_adult');
    assert.equal(familyTier([40, 38], 21), 'two_adults');
    assert.equal(familyTier([40, 5], 21), 'one_adult_and_children');
    assert.equal(familyTier([40, 38, 5, 3, 1, 0], 21), 'two_adults_and_children');
    assert.equal(familyTier([10, 5], 21), 'child_only');
    assert.equal(familyTier([20, 21], 21), 'one_adult_and_children');
    assert.equal(familyTier([40, 38, 60], 21), 'two_adults', 'more than two adults: two-adult tier plus extra adults');
  });

  // NY curve: adult 1.000, child 0.412; adult base rate $500.
  const nyCents = (age: number): number => (age >= 21 ? 50_000 : 20_600);

  test('NY two adults and a child: 2.85 × the adult rate, shared in proportion to the members’ rates', () => {
    const h = householdPremiumCents(nyCents, [40, 38, 10], rules, 'NY');
    // 2.85 × $500 = $1,425.00
    assert.equal(h.totalCents, 142_500);
    // Shares 142,500 × 50,000/120,600 = 59,079.60…, same, 142,500 × 20,600/120,600 = 24,340.80…;
    // floors 59,079 + 59,079 + 24,340 = 142,498; the 2 cents left go to the largest fractions (.80, then .60 of the first).
    assert.deepEqual(
      h.members.map((m) => [m.cents, m.counted]),
      [
        [59_080, true],
        [59_079, true],
        [24_341, true],
      ],
    );
  });

  test('NY: no three-child cap under tiers; single, couple, child-only and a third adult', () => {
    // 1 adult + 4 children: 1.70 × $500 = $850, every child counted.
    const big = householdPremiumCents(nyCents, [40, 12, 9, 5, 2], rules, 'NY');
    assert.equal(big.totalCents, 85_000);
    assert.ok(big.members.every((m) => m.counted));
    assert.equal(householdPremiumCents(nyCents, [40], rules, 'NY').totalCents, 50_000);
    assert.equal(householdPremiumCents(nyCents, [40, 38], rules, 'NY').totalCents, 100_000);
    // Child only: 0.412 × $500 = $206.
    assert.equal(householdPremiumCents(nyCents, [10, 5], rules, 'NY').totalCents, 20_600);
    // Three adults: (2.00 + 1.00) × $500 = $1,500.
    assert.equal(householdPremiumCents(nyCents, [40, 38, 60], rules, 'NY').totalCents, 150_000);
  });

  test('VT (flat curve, no child-only factor): tiers 1.93 and 2.81; children alone rated as a child subscriber', () => {
    const vtCents = (): number => 60_000;
    // 1 adult + 2 children: 1.93 × $600 = $1,158, equal shares 38,600 each.
    const h = householdPremiumCents(vtCents, [40, 10, 8], rules, 'VT');
    assert.equal(h.totalCents, 115_800);
    assert.deepEqual(
      h.members.map((m) => m.cents),
      [38_600, 38_600, 38_600],
    );
    // 2 adults + 1 child: 2.81 × $600 = $1,686.
    assert.equal(householdPremiumCents(vtCents, [40, 38, 1], rules, 'VT').totalCents, 168_600);
    // One child alone: one_adult 1.00 × $600; two children: 1.93 × $600 = $1,158.
    assert.equal(householdPremiumCents(vtCents, [10], rules, 'VT').totalCents, 60_000);
    assert.equal(householdPremiumCents(vtCents, [10, 7], rules, 'VT').totalCents, 115_800);
  });
});

describe('family-tier amounts from the Rate PUF', () => {
  test('the household picks the tier column of the file: subscriber or couple, with 0, 1, 2 or 3+ dependants', () => {
    assert.equal(tierColumn([40], 21), 'individual');
    assert.equal(tierColumn([40, 38], 21), 'couple');
    assert.equal(tierColumn([40, 5], 21), 'primarySubscriberAndOneDependent');
    assert.equal(tierColumn([40, 5, 7], 21), 'primarySubscriberAndTwoDependents');
    assert.equal(tierColumn([40, 5, 7, 9, 11], 21), 'primarySubscriberAndThreeOrMoreDependents');
    assert.equal(tierColumn([40, 38, 5], 21), 'coupleAndOneDependent');
    assert.equal(tierColumn([40, 38, 5, 7], 21), 'coupleAndTwoDependents');
    assert.equal(tierColumn([40, 38, 5, 7, 9], 21), 'coupleAndThreeOrMoreDependents');
    // No column prices three adults or children alone: those keep the rules' tier factors.
    assert.equal(tierColumn([40, 38, 22], 21), null);
    assert.equal(tierColumn([10], 21), null);
  });

  test("the file's tier amount wins over factor × adult rate, and the members' shares add up to it", () => {
    const flat = (): number => 100_000;
    const byFactor = householdPremiumCents(flat, [40, 5], rules, 'VT');
    assert.equal(byFactor.totalCents, 193_000);
    const fromFile = householdPremiumCents(flat, [40, 5], rules, 'VT', 185_001);
    assert.equal(fromFile.totalCents, 185_001);
    assert.deepEqual(
      fromFile.members.map((m) => m.cents),
      [92_501, 92_500],
    );
    // Per-member states never read a tier amount.
    assert.equal(householdPremiumCents(flat, [40, 5], rules, 'TX', 185_001).totalCents, 200_000);
  });
});
