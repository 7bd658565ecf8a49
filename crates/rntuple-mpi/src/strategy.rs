//! How ranks learn where their clusters go: the strategies of the paper, and one file per rank
//! as the baseline. Their names are listed once, here.

use rntuple::Error;

/// A distributed writing strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// Ranks send whole sealed clusters to an aggregator thread on rank 0, which writes them.
    SendData,
    /// Ranks send a cluster's size to the aggregator thread on rank 0, which reserves its byte
    /// range; the rank writes its keys itself (the paper's best).
    Metadata,
    /// A global offset in an MPI window on rank 0, advanced under an exclusive lock with
    /// `MPI_Fetch_and_op`; no aggregator thread.
    OneSided,
    /// The global offset in a side file under an `fcntl` byte-range lock: any POSIX shared file
    /// system, no MPI one-sided communication.
    FileLock,
    /// Each rank writes its own file `PATH.r<rank>` (the baseline; a merge makes one file).
    SeparateFiles,
}

impl Strategy {
    /// Every strategy with its name, in the order of the paper.
    pub const ALL: [(Strategy, &'static str); 5] = [
        (Strategy::SendData, "send-data"),
        (Strategy::Metadata, "metadata"),
        (Strategy::OneSided, "one-sided"),
        (Strategy::FileLock, "file-lock"),
        (Strategy::SeparateFiles, "separate-files"),
    ];

    /// The strategy's name (as on the command line).
    pub fn name(self) -> &'static str {
        Strategy::ALL.iter().find(|(s, _)| *s == self).map(|(_, n)| *n).unwrap_or("?")
    }

    /// Whether rank 0 runs an aggregator thread (and so MPI must allow `MPI_THREAD_MULTIPLE`).
    pub fn needs_aggregator(self) -> bool {
        matches!(self, Strategy::SendData | Strategy::Metadata)
    }
}

impl std::str::FromStr for Strategy {
    type Err = Error;

    /// ```
    /// use rntuple_mpi::Strategy;
    /// assert_eq!("one-sided".parse::<Strategy>()?, Strategy::OneSided);
    /// assert!("fast".parse::<Strategy>().unwrap_err().to_string().contains("metadata"));
    /// # Ok::<(), rntuple::Error>(())
    /// ```
    fn from_str(s: &str) -> Result<Strategy, Error> {
        Strategy::ALL.iter().find(|(_, n)| *n == s).map(|(st, _)| *st).ok_or_else(|| {
            let names: Vec<&str> = Strategy::ALL.iter().map(|(_, n)| *n).collect();
            Error::Invalid(format!("unknown strategy '{s}' (known: {})", names.join(", ")))
        })
    }
}

impl std::fmt::Display for Strategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}
