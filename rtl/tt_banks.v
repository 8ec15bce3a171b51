`default_nettype none
// tt_banks: the accelerator's data memory: NBANK banks (tt_bank) behind one global element address space,
// bank k's word i at address (k << BANK_SHIFT) + i (golden/program.py). The active unit sees three logical
// read ports (0: a / x / logits, 1: b / z, 2: the destination's old word) and one write port; reads come back
// sign-extended from the bank's width to DATA_W.
//
// Pipelining (for Fmax): REG_IN registers the requests as they arrive (before the decode and routing), REG_REQ
// the routed read requests and the write between the routing and the RAMs, REG_OUT the RAMs' output (1: the block
// RAMs' output registers; 2: a fabric register behind each of them too, tt_bank), REG_DATA the read data after the
// output mux; the read latency is
// 1 + REG_IN + REG_REQ + REG_OUT + REG_DATA. A write lands REG_IN + REG_REQ cycles later,
// as every read does, so the order of reads and writes a unit sees is the unregistered one: a read in the cycle
// of a write to its address returns the old word, a read in any later cycle the new. addr_err and port_err
// describe the requests of REG_IN cycles ago.
//
// Routing: in every cycle, bank k gives its physical read ports (BANK_PORTS: 1 to 3 copies) to the logical ports
// whose bank field is k, in logical port order (an illegal read, already an addr_err, may take a port). The
// compiler never makes a bank serve more reads than it has ports; if a program does, port_err pulses (the
// sequencer stops with an error) and the extra read returns 0. An address outside every bank (bank field >= NBANK, high bits
// set, or a word past the bank's depth) pulses addr_err; such a write is dropped and such a read returns 0. So does a
// run read whose last word is past the bank's depth, so that a run without addr_err never reaches a row the bank does
// not have.
//
// Vector reads: a bank with BANK_VEC set is built in rows of VEC words (tt_bank VEC). Logical port p reads the run of
// the n1 + 1 consecutive words from its address (n1 = rd_run_n1[4*p +: 4], 0: the word alone, at most VEC - 1; the run
// may start anywhere in a row and go on into the next): the word of each column of the bank's row (tt_bank: column c
// reads the address's row from the address's column on, the next row before it) in rd_vec_data's VEC words of port p
// (column c in [DATA_W*(VEC*p + c) +: DATA_W], sign-extended; the run's columns read, the others as they were) comes
// beside the word itself in rd_data, with the same latency. Run writes: with wr_run, a write writes RUN consecutive
// words from wr_addr (a multiple of RUN), word i from [DATA_W*i +: DATA_W] of wr_data, in one cycle (the contraction
// engine's wide drain); a one-word write takes word 0. A run read (n1 > 0) or a run write of a bank without rows pulses
// port_err (the read returns 0, the write is dropped).
module tt_banks #(
  parameter integer          NBANK      = 4,
  parameter integer          ADDR_W     = 20,  // global element address
  parameter integer          DATA_W     = 16,  // read/write data of the units
  parameter integer          BANK_SHIFT = 12,  // local address width of every bank
  parameter [NBANK*32-1:0]   BANK_DEPTH = {32'd4096, 32'd4096, 32'd4096, 32'd4096},  // bank 0 in the LSBs
  parameter [NBANK*32-1:0]   BANK_WIDTH = {32'd16, 32'd8, 32'd4, 32'd16},
  parameter [NBANK*32-1:0]   BANK_PORTS = {32'd2, 32'd1, 32'd1, 32'd2},
  parameter [NBANK*32-1:0]   BANK_VEC   = {NBANK{32'd0}},  // 1: the bank is built in rows of VEC words
  parameter integer          VEC        = 1,   // words per row of the banks with BANK_VEC (1..16, a power of two)
  parameter integer          RUN        = 1,   // words of a run write (1: none; a power of two up to VEC)
  parameter integer          REG_IN     = 0,   // 1: a register on the incoming requests
  parameter integer          REG_REQ    = 0,   // 1: a register between the routing and the RAMs
  parameter integer          REG_OUT    = 0,   // the RAMs' output registers: 0, 1 or 2 (tt_bank OUT_REG)
  parameter integer          REG_DATA   = 0,   // 1: a register after the read data mux
  parameter integer          BLOCK_BITS = 0,   // bits per block RAM of the part (tt_bank); 0: one memory per copy
  parameter [63:0] TECH       = "generic"  // the block RAMs' technology (rtl/prim/tt_prim_ram.v)
) (
  input  wire                 clk,
  input  wire                 rst,
  input  wire [2:0]           rd_en,
  input  wire [3*ADDR_W-1:0]  rd_addr,
  output wire [3*DATA_W-1:0]  rd_data,
  input  wire [3*4-1:0]       rd_run_n1,     // the words logical port p's read takes after its address's
  output wire [3*VEC*DATA_W-1:0] rd_vec_data,
  input  wire                 wr_en,
  input  wire                 wr_run,        // the write is a run of RUN words
  input  wire [ADDR_W-1:0]    wr_addr,
  input  wire [RUN*DATA_W-1:0] wr_data,
  output wire                 addr_err,
  output wire                 port_err
);

  localparam integer NRD = 3;
  localparam integer BB = (NBANK > 1) ? $clog2(NBANK) : 1;  // bank field width
  localparam integer AW = BANK_SHIFT;

  generate
    if (NBANK < 1 || NBANK > 8) begin : g_bad_nbank
      error_tt_banks_NBANK_must_be_1_to_8 u_error ();
    end
    if (BANK_SHIFT < 1 || BANK_SHIFT + BB > ADDR_W) begin : g_bad_shift
      error_tt_banks_BANK_SHIFT_plus_bank_bits_must_fit_ADDR_W u_error ();
    end
    if (DATA_W < 2 || DATA_W > 32) begin : g_bad_data_w
      error_tt_banks_DATA_W_must_be_2_to_32 u_error ();
    end
    if (REG_IN < 0 || REG_IN > 1 || REG_REQ < 0 || REG_REQ > 1 || REG_OUT < 0 || REG_OUT > 2 || REG_DATA < 0 ||
        REG_DATA > 1) begin : g_bad_reg
      error_tt_banks_REG_IN_REG_REQ_and_REG_DATA_must_be_0_or_1_and_REG_OUT_0_to_2 u_error ();
    end
    if (VEC != 1 && VEC != 2 && VEC != 4 && VEC != 8 && VEC != 16) begin : g_bad_vec
      error_tt_banks_VEC_must_be_1_2_4_8_or_16 u_error ();
    end
    if (RUN != 1 && RUN != 2 && RUN != 4 && RUN != 8 && RUN != 16 || RUN > VEC) begin : g_bad_run
      error_tt_banks_RUN_must_be_1_2_4_8_or_16_and_at_most_VEC u_error ();
    end
  endgenerate

  // ---- every access's legality: a and the n1 words after it are in a bank (AW + 5 bits: the sum never wraps) ----
  function automatic legal(input [ADDR_W-1:0] a, input [3:0] n1);
    reg [ADDR_W-1:0] high;
    integer k;
    begin
      high = a >> (BANK_SHIFT + BB);
      legal = 1'b0;
      for (k = 0; k < NBANK; k = k + 1) begin
        if (a[BANK_SHIFT +: BB] == k[BB-1:0] &&
            {5'd0, a[AW-1:0]} + {{(AW+1){1'b0}}, n1} < {4'd0, BANK_DEPTH[32*k +: AW+1]}) begin
          legal = (high == {ADDR_W{1'b0}});
        end
      end
    end
  endfunction

  // ---- the requests, registered when REG_IN ----
  reg [2:0]          in_rd_en;
  reg [3*4-1:0]      in_rd_n1;
  reg [3*ADDR_W-1:0] in_rd_addr;
  reg                in_wr_en;
  reg                in_wr_run;
  reg [ADDR_W-1:0]   in_wr_addr;
  reg [RUN*DATA_W-1:0] in_wr_data;
  // Legality is decided before REG_IN's register, from the requests as they arrive: its adders and compares are
  // then off the paths from the registered requests to the block RAMs' enables and to the sequencer's error.
  reg [2:0]          in_rd_legal;
  reg                in_wr_legal;
  reg [2:0]          rd_legal;
  reg                wr_legal;
  integer            lp;
  always @* begin
    wr_legal = legal(wr_addr, 4'd0);
    for (lp = 0; lp < 3; lp = lp + 1) begin
      rd_legal[lp] = legal(rd_addr[ADDR_W*lp +: ADDR_W], rd_run_n1[4*lp +: 4]);
    end
  end
  generate
    if (REG_IN != 0) begin : g_reg_in
      always @(posedge clk) begin
        if (rst) begin
          in_rd_en <= 3'b000;
          in_wr_en <= 1'b0;
        end else begin
          in_rd_en <= rd_en;
          in_wr_en <= wr_en;
        end
        in_rd_n1 <= rd_run_n1;
        in_rd_addr <= rd_addr;
        in_wr_run <= wr_run;
        in_wr_addr <= wr_addr;
        in_wr_data <= wr_data;
        in_rd_legal <= rd_legal;
        in_wr_legal <= wr_legal;
      end
    end else begin : g_direct_in
      always @* begin
        in_rd_en = rd_en;
        in_rd_n1 = rd_run_n1;
        in_rd_addr = rd_addr;
        in_wr_en = wr_en;
        in_wr_run = wr_run;
        in_wr_addr = wr_addr;
        in_wr_data = wr_data;
        in_rd_legal = rd_legal;
        in_wr_legal = wr_legal;
      end
    end
  endgenerate

  // ---- read routing: logical port p -> (bank, physical port) ----
  // hit[NRD*k + p]: logical port p reads bank k. The bank field alone routes: the depth and high-bit checks sit
  // beside it, off the address path. Bank k's physical port 0 serves its first hit, port 1 (if it has one) its
  // second, both chosen by two-level muxes rather than a running count so that the address path stays short.
  // Physical port j of bank k is entry 4k + j of the arrays below ({bank, port}: no multiply in the read mux).
  reg [NBANK*NRD-1:0]  hit;
  reg [NBANK*4-1:0]    ph_en;
  reg [NBANK*4*4-1:0]  ph_n1;   // the words the physical port's read takes after its address's
  reg [NBANK*4*AW-1:0] ph_addr;
  reg [NRD*BB-1:0]     sel_bank;
  reg [NRD*2-1:0]      sel_port;  // logical port p's rank among its bank's hits: the physical port it reads
  reg [NRD-1:0]        sel_ok;
  reg                  port_err_c;
  reg                  rd_bad_c;
  reg [NRD-1:0]        hk;
  reg [1:0]            rank;
  integer              p;
  integer              e;  // an earlier logical port
  integer              k;

  always @* begin
    ph_en = {(NBANK*4){1'b0}};
    ph_n1 = {(NBANK*4*4){1'b0}};
    ph_addr = {(NBANK*4*AW){1'b0}};
    sel_bank = {(NRD*BB){1'b0}};
    sel_port = {(NRD*2){1'b0}};
    sel_ok = {NRD{1'b0}};
    port_err_c = 1'b0;
    rd_bad_c = 1'b0;
    hk = {NRD{1'b0}};
    rank = 2'd0;
    for (k = 0; k < NBANK; k = k + 1) begin
      for (p = 0; p < NRD; p = p + 1) begin
        hit[NRD*k + p] = in_rd_en[p] && in_rd_addr[ADDR_W*p + BANK_SHIFT +: BB] == k[BB-1:0];
      end
      hk = hit[NRD*k +: NRD];
      ph_en[4*k] = |hk;
      ph_addr[4*k*AW +: AW] = hk[0] ? in_rd_addr[0 +: AW] :
                              hk[1] ? in_rd_addr[ADDR_W +: AW] : in_rd_addr[2*ADDR_W +: AW];
      if (BANK_PORTS[32*k +: 32] > 1) begin  // the second hit
        ph_en[4*k + 1] = (hk[0] && hk[1]) || ((hk[0] || hk[1]) && hk[2]);
        ph_addr[(4*k + 1)*AW +: AW] = (hk[0] && hk[1]) ? in_rd_addr[ADDR_W +: AW] : in_rd_addr[2*ADDR_W +: AW];
      end
      // Logical port p takes the bank's physical port numbered by the earlier logical ports that read the bank (its
      // rank among the bank's hits), and has data if the bank has that port and the address is legal (else 0).
      for (p = 0; p < NRD; p = p + 1) begin
        rank = 2'd0;
        for (e = 0; e < p; e = e + 1) begin
          rank = rank + {1'b0, hk[e]};
        end
        if (hk[p]) begin
          sel_port[2*p +: 2] = rank;
          sel_ok[p] = in_rd_legal[p] && (rank < BANK_PORTS[32*k +: 2]);
        end
        if (hk[p] && in_rd_n1[4*p +: 4] != 4'd0) begin
          ph_n1[4*(4*k + {30'd0, rank}) +: 4] = in_rd_n1[4*p +: 4];
          port_err_c = port_err_c || BANK_VEC[32*k +: 32] == 0;
        end
      end
      if (BANK_PORTS[32*k +: 32] > 2) begin  // the third: every logical port hits the bank
        ph_en[4*k + 2] = &hk;
        ph_addr[(4*k + 2)*AW +: AW] = in_rd_addr[2*ADDR_W +: AW];
      end else if (BANK_PORTS[32*k +: 32] == 2) begin
        port_err_c = port_err_c || (&hk);
      end else begin
        port_err_c = port_err_c || (hk[0] && hk[1]) || (hk[0] && hk[2]) || (hk[1] && hk[2]);
      end
    end
    // Each logical port's bank (its port and legality are set above).
    for (p = 0; p < NRD; p = p + 1) begin
      sel_bank[BB*p +: BB] = in_rd_addr[ADDR_W*p + BANK_SHIFT +: BB];
      if (in_rd_en[p] && !in_rd_legal[p]) begin
        rd_bad_c = 1'b1;
      end
    end
  end

  // A run write needs a bank with rows.
  reg run_err_c;
  integer kw;
  always @* begin
    run_err_c = 1'b0;
    for (kw = 0; kw < NBANK; kw = kw + 1) begin
      if (in_wr_en && in_wr_run && in_wr_addr[BANK_SHIFT +: BB] == kw[BB-1:0] && BANK_VEC[32*kw +: 32] == 0) begin
        run_err_c = 1'b1;
      end
    end
  end

  // ---- the requests the RAMs see: routed, then registered when REG_REQ ----
  wire wr_ok = in_wr_en && in_wr_legal && !run_err_c;
  reg  [NBANK*4-1:0]    ram_rd_en;
  reg  [NBANK*4*4-1:0]  ram_rd_n1;
  reg  [NBANK*4*AW-1:0] ram_rd_addr;
  reg                   ram_wr_en;
  reg                   ram_wr_run;
  reg  [AW+BB-1:0]      ram_wr_addr;  // bank field and local address
  reg  [RUN*DATA_W-1:0] ram_wr_data;
  generate
    if (REG_REQ != 0) begin : g_reg_req
      always @(posedge clk) begin
        if (rst) begin
          ram_rd_en <= {(NBANK*4){1'b0}};
          ram_wr_en <= 1'b0;
        end else begin
          ram_rd_en <= ph_en;
          ram_wr_en <= wr_ok;
        end
        ram_rd_n1 <= ph_n1;
        ram_rd_addr <= ph_addr;
        ram_wr_run <= in_wr_run;
        ram_wr_addr <= in_wr_addr[AW+BB-1:0];
        ram_wr_data <= in_wr_data;
      end
    end else begin : g_direct_req
      always @* begin
        ram_rd_en = ph_en;
        ram_rd_n1 = ph_n1;
        ram_rd_addr = ph_addr;
        ram_wr_en = wr_ok;
        ram_wr_run = in_wr_run;
        ram_wr_addr = in_wr_addr[AW+BB-1:0];
        ram_wr_data = in_wr_data;
      end
    end
  endgenerate

  // ---- the banks ----
  wire [NBANK*4*DATA_W-1:0]     ph_data;  // sign-extended read data of every physical port
  wire [NBANK*4*VEC*DATA_W-1:0] ph_vec;   // and its row (0 for a bank without rows)

  genvar g;
  generate
    for (g = 0; g < NBANK; g = g + 1) begin : g_bank
      localparam integer W = BANK_WIDTH[32*g +: 32];
      localparam integer NP = BANK_PORTS[32*g +: 32];
      localparam integer BV = (BANK_VEC[32*g +: 32] != 0) ? VEC : 1;
      if (W < 1 || W > DATA_W) begin : g_bad_width
        error_tt_banks_BANK_WIDTH_must_be_1_to_DATA_W u_error ();
      end
      if (NP < 1 || NP > 3) begin : g_bad_ports
        error_tt_banks_BANK_PORTS_must_be_1_to_3 u_error ();
      end
      wire [NP*W-1:0]    data;
      wire [NP*BV*W-1:0] row;
      // The write's columns and their words: one word in the column of its address, or a run of RUN columns.
      wire [BV-1:0]      wr_mask;
      wire [BV*W-1:0]    wr_words;
      genvar c;
      if (BV > 1) begin : g_row_write
        localparam integer CW = $clog2(BV);
        wire [CW-1:0] col = ram_wr_addr[CW-1:0];
        for (c = 0; c < BV; c = c + 1) begin : g_col
          localparam [CW-1:0] C = c;
          localparam [31:0]   RUN_M1 = RUN - 1;
          localparam [CW-1:0] RUN_MASK = ~RUN_M1[CW-1:0];  // a column's run: its column bits above the run's
          assign wr_mask[c] = ram_wr_run ? (C & RUN_MASK) == (col & RUN_MASK) : C == col;
          assign wr_words[c*W +: W] = ram_wr_run ? ram_wr_data[(c % RUN)*DATA_W +: W] : ram_wr_data[W-1:0];
        end
      end else begin : g_word_write
        assign wr_mask  = 1'b1;
        assign wr_words = ram_wr_data[W-1:0];
      end
      tt_bank #(
        .WIDTH      (W),
        .DEPTH      (BANK_DEPTH[32*g +: 32]),
        .AW         (AW),
        .READ_PORTS (NP),
        .OUT_REG    (REG_OUT),
        .BLOCK_BITS (BLOCK_BITS),
        .VEC        (BV),
        .TECH       (TECH)
      ) u_bank (
        .clk       (clk),
        .rst       (rst),
        .wr_en     (ram_wr_en && ram_wr_addr[BANK_SHIFT +: BB] == g[BB-1:0]),
        .wr_addr   (ram_wr_addr[AW-1:0]),
        .wr_mask   (wr_mask),
        .wr_data   (wr_words),
        .rd_en     (ram_rd_en[4*g +: NP]),
        .rd_run_n1 (ram_rd_n1[4*4*g +: 4*NP]),
        .rd_addr   (ram_rd_addr[4*g*AW +: NP*AW]),
        .rd_data   (data),
        .rd_vec    (row)
      );
      genvar j;
      for (j = 0; j < 4; j = j + 1) begin : g_port
        if (j < NP) begin : g_used
          assign ph_data[(4*g + j)*DATA_W +: DATA_W] = {{(DATA_W-W){data[j*W + W - 1]}}, data[j*W +: W]};
        end else begin : g_absent
          assign ph_data[(4*g + j)*DATA_W +: DATA_W] = {DATA_W{1'b0}};
        end
        for (c = 0; c < VEC; c = c + 1) begin : g_word
          if (j < NP && BV == VEC) begin : g_row
            localparam integer I = (j*BV + c)*W;
            assign ph_vec[((4*g + j)*VEC + c)*DATA_W +: DATA_W] = {{(DATA_W-W){row[I + W - 1]}}, row[I +: W]};
          end else begin : g_none
            assign ph_vec[((4*g + j)*VEC + c)*DATA_W +: DATA_W] = {DATA_W{1'b0}};
          end
        end
      end
      if (BV == 1) begin : g_no_rows
        wire unused_row = ^row;
      end
    end
  endgenerate

  // ---- read data: the selection of each logical port, SEL_DLY = 1 + REG_REQ + REG_OUT cycles later ----
  localparam integer SEL_W = NRD*BB + 2*NRD;
  localparam integer SEL_DLY = 1 + REG_REQ + REG_OUT;
  reg [SEL_DLY*SEL_W-1:0] sel_line_q;  // {bank, port} of each logical port, oldest at the top
  reg [SEL_DLY*NRD-1:0]   ok_line_q;
  integer d;
  always @(posedge clk) begin
    if (rst) begin
      ok_line_q <= {(SEL_DLY*NRD){1'b0}};
    end else begin
      for (d = SEL_DLY - 1; d > 0; d = d - 1) begin
        ok_line_q[NRD*d +: NRD] <= ok_line_q[NRD*(d-1) +: NRD];
      end
      ok_line_q[0 +: NRD] <= sel_ok;
    end
    for (d = SEL_DLY - 1; d > 0; d = d - 1) begin
      sel_line_q[SEL_W*d +: SEL_W] <= sel_line_q[SEL_W*(d-1) +: SEL_W];
    end
    sel_line_q[0 +: SEL_W] <= {sel_bank, sel_port};
  end
  // the selection when the data leaves the RAMs
  wire [SEL_W-1:0] sel_q    = sel_line_q[SEL_W*(SEL_DLY-1) +: SEL_W];
  wire [NRD-1:0]   sel_ok_q = ok_line_q[NRD*(SEL_DLY-1) +: NRD];
  wire [NRD*BB-1:0] sel_bank_q = sel_q[2*NRD +: NRD*BB];
  wire [2*NRD-1:0]  sel_port_q = sel_q[0 +: 2*NRD];

  wire [3*DATA_W-1:0]     rd_data_c;
  wire [3*VEC*DATA_W-1:0] rd_vec_c;  // each logical port's row
  genvar q;
  generate
    for (q = 0; q < NRD; q = q + 1) begin : g_rd
      wire [BB+1:0] ph = {sel_bank_q[BB*q +: BB], sel_port_q[2*q +: 2]};
      assign rd_data_c[DATA_W*q +: DATA_W] = sel_ok_q[q] ? ph_data[DATA_W*ph +: DATA_W] : {DATA_W{1'b0}};
      assign rd_vec_c[VEC*DATA_W*q +: VEC*DATA_W] = sel_ok_q[q] ? ph_vec[VEC*DATA_W*ph +: VEC*DATA_W] :
                                                                  {(VEC*DATA_W){1'b0}};
    end
    if (REG_DATA != 0) begin : g_reg_data
      reg [3*DATA_W-1:0]     rd_data_q;
      reg [3*VEC*DATA_W-1:0] rd_vec_q;
      always @(posedge clk) begin
        rd_data_q <= rd_data_c;
        rd_vec_q  <= rd_vec_c;
      end
      assign rd_data = rd_data_q;
      assign rd_vec_data = rd_vec_q;
    end else begin : g_direct_data
      assign rd_data = rd_data_c;
      assign rd_vec_data = rd_vec_c;
    end
  endgenerate

  // The physical ports a bank does not have are never driven into a tt_bank.
  wire unused_ph = ^{ram_rd_en, ram_rd_n1, ram_rd_addr, ram_wr_run};  // ram_wr_run: unused without rows
  // A registered write address's bits above the bank field count only in its legality, decided before the register.
  wire unused_wr_high = ^(in_wr_addr >> (BANK_SHIFT + BB));

  assign addr_err = rd_bad_c || (in_wr_en && !in_wr_legal);  // a run without rows is a port error alone
  assign port_err = port_err_c || run_err_c;

endmodule
`default_nettype wire
