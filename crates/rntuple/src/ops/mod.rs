//! Operations on whole datasets that read one file and write another: merging and skimming.
//! They sit above both the reader and the writer (which do not know each other) and trade in the
//! writer's currency, the relocatable sealed cluster. A skim goes through [`skim::run`], which
//! picks its engine: `skim_one` (one input, no selection) or `select`.

pub mod merge;
crate::unstable_mod! {
    select
}
pub mod skim;
mod skim_one;
